import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { assertNever, type LanguageModel, type RunEventListener, type TrainablePolicy, writeFileAtomic } from '@agentflow/core';
import { type AdapterSync, type AdapterSyncState, createAdapterSync, createVllmServers } from '@agentflow/llm';
import { saveLoraAdapter } from '@agentflow/models';
import type { VllmRolloutsConfig } from '../config/rollouts-schema';
import type { RunConfig } from '../config/schema';
import type { OpenPlanner } from '../pipeline/planner-checkpoints';
import { createTokenExactCheck, type TokenExactFigures } from './token-exact-check';

/** Where DAPO's rollouts are sampled, as the train stage sees it. */
export interface RolloutBackend {
  /** The planner's model for rollouts and the in-training evaluations. */
  languageModel: LanguageModel;
  /** The policy DAPO trains (for vLLM: its old log-probs checked against the servers'). */
  trainingPolicy: TrainablePolicy;
  /** Before the first rollout (after a resume): puts the servers in a known state. */
  prepare(): Promise<void>;
  /** Figures of the step just taken, for its metrics row. */
  stepMetrics(): Record<string, number>;
}

/** Where the adapter versions of a vLLM run are recorded: the run's rollout state. */
export const vllmStatePath = (runRoot: string) => join(runRoot, 'vllm-adapters.json');

export interface RolloutBackendSettings {
  config: RunConfig['policy'];
  planner: OpenPlanner;
  /** The folder DAPO's adapter applies to (written as base_model_name_or_path). */
  baseModelDir: string;
  runRoot: string;
  /** Optimiser steps taken so far: the adapter version rollouts must use. */
  version(): number;
  emit: RunEventListener;
}

function vllmBackend(rollouts: VllmRolloutsConfig, settings: RolloutBackendSettings): RolloutBackend {
  const { planner, emit } = settings;
  const servers = createVllmServers({
    urls: rollouts.urls,
    model: rollouts.model,
    tokenizer: planner.tokenizer,
    guidedDecoding: rollouts.guidedDecoding,
    concurrency: rollouts.concurrency,
    timeoutMs: rollouts.timeoutMs,
    maxTokens: settings.config.maxNewTokens,
    temperature: settings.config.temperature,
    warn: (message) => emit({ type: 'log', level: 'warn', message }),
  });
  const adapterDir = resolve(rollouts.adapterDir ?? join(settings.runRoot, 'adapters'));
  const statePath = vllmStatePath(settings.runRoot);
  const sync: AdapterSync = createAdapterSync({
    servers,
    prefix: rollouts.adapterPrefix,
    pathOf: (version) => join(adapterDir, `${rollouts.adapterPrefix}-step${version}`),
    saveAdapter: (_version, path) => saveLoraAdapter(path, planner.policy.adapter, resolve(settings.baseModelDir)),
    readState: () => (existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')) as AdapterSyncState) : undefined),
    writeState: (state) => writeFileAtomic(statePath, `${JSON.stringify(state, null, 2)}\n`),
    log: (message) => emit({ type: 'log', level: 'info', message }),
  });
  const check = createTokenExactCheck({
    maxMeanGap: rollouts.maxMeanLogprobGap,
    maxTokenGap: rollouts.maxTokenLogprobGap,
    sampler: `the vLLM servers (${rollouts.urls.join(', ')})`,
  });
  // The version the step's rollouts sampled with (the first one asked for since the last metrics row).
  let rolloutVersion: number | undefined;
  const languageModel: LanguageModel = {
    ...servers.languageModel,
    async chat(request) {
      // Every rollout of a step samples with that step's adapter, loaded on every server first.
      const version = settings.version();
      rolloutVersion ??= version;
      await sync.ensure(version);
      const response = await servers.languageModel.chat(request);
      check.record(response);
      return response;
    },
  };
  return {
    languageModel,
    trainingPolicy: check.wrap<TrainablePolicy>(planner.policy),
    prepare: () => sync.recover(),
    stepMetrics(): Record<string, number> {
      const figures: TokenExactFigures = check.takeFigures();
      const version = rolloutVersion ?? -1;
      rolloutVersion = undefined;
      return { ...figures, adapterVersion: version, vllmServers: servers.urls.length };
    },
  };
}

/** The rollout back end of `config.rollouts`. */
export function openRolloutBackend(settings: RolloutBackendSettings): RolloutBackend {
  const { rollouts } = settings.config;
  switch (rollouts.kind) {
    case 'local':
      return { languageModel: settings.planner.languageModel, trainingPolicy: settings.planner.policy, prepare: async () => {}, stepMetrics: () => ({}) };
    case 'vllm':
      return vllmBackend(rollouts, settings);
    default:
      return assertNever(rollouts, 'policy.rollouts kind');
  }
}
