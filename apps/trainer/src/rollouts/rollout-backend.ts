import { join, resolve } from 'node:path';
import { assertNever, type RunEventListener } from '@agentflow/core';
import { createLocalRollouts, createVllmRollouts, type RolloutBackend } from '@agentflow/llm';
import { type LocalPolicy, saveLoraAdapter } from '@agentflow/models';
import type { RunConfig } from '../config/schema';
import type { OpenPlanner } from '../pipeline/planner-checkpoints';

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

/** The rollout back end of `config.rollouts`: in-process, or on vLLM servers with the run's adapter folder and state. */
export function openRolloutBackend(settings: RolloutBackendSettings): RolloutBackend<LocalPolicy> {
  const { config, planner, emit } = settings;
  const { rollouts } = config;
  switch (rollouts.kind) {
    case 'local':
      return createLocalRollouts({ languageModel: planner.languageModel, policy: planner.policy });
    case 'vllm':
      return createVllmRollouts({
        servers: {
          urls: rollouts.urls,
          model: rollouts.model,
          tokenizer: planner.tokenizer,
          guidedDecoding: rollouts.guidedDecoding,
          concurrency: rollouts.concurrency,
          timeoutMs: rollouts.timeoutMs,
          maxTokens: config.maxNewTokens,
          temperature: config.temperature,
          warn: (message) => emit({ type: 'log', level: 'warn', message }),
        },
        policy: planner.policy,
        saveAdapter: (path) => saveLoraAdapter(path, planner.policy.adapter, resolve(settings.baseModelDir)),
        adapterPrefix: rollouts.adapterPrefix,
        adapterDir: rollouts.adapterDir ?? join(settings.runRoot, 'adapters'),
        statePath: vllmStatePath(settings.runRoot),
        version: settings.version,
        maxMeanLogprobGap: rollouts.maxMeanLogprobGap,
        maxTokenLogprobGap: rollouts.maxTokenLogprobGap,
        log: (message) => emit({ type: 'log', level: 'info', message }),
      });
    default:
      return assertNever(rollouts, 'policy.rollouts kind');
  }
}
