import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type LanguageModel, type TrainablePolicy, writeFileAtomic } from '@agentflow/core';
import type { RolloutBackend } from '../rollouts/rollout-backend';
import { type AdapterSyncState, createAdapterSync } from './adapter-sync';
import { createTokenExactCheck } from './token-exact-check';
import { createVllmServers, type VllmServersSettings } from './vllm-servers';

/** Settings for {@link createVllmRollouts}. */
export interface VllmRolloutsSettings<Policy extends TrainablePolicy> {
  /** The vLLM servers (see createVllmServers), each serving the base model the trained adapter applies to. */
  servers: VllmServersSettings;
  /** The policy being trained: its old log-probs, recomputed by the training engine, are checked against the servers' sampling log-probs. */
  policy: Policy;
  /** Writes the trained adapter as it is now as a PEFT folder at `path` (base_model_name_or_path: the servers' base model folder). */
  saveAdapter(path: string): Promise<void>;
  /** Adapters are loaded as `${adapterPrefix}-step${version}`; other names on the servers are left alone. */
  adapterPrefix: string;
  /** Where each version's PEFT folder is written (resolved to an absolute path, which every server must be able to read). */
  adapterDir: string;
  /** The JSON file recording the versions the servers hold (the pending one written before any load), read back on resume. */
  statePath: string;
  /** Optimiser steps taken so far: the adapter version a rollout must sample with. */
  version(): number;
  /** Stop a step whose mean per-token log-prob gap exceeds this (null: never); see createTokenExactCheck. */
  maxMeanLogprobGap: number | null;
  /** Stop a step when one token's gap exceeds this (null: never). */
  maxTokenLogprobGap: number | null;
  /** Told what the adapter sync does (loads, unloads, what a resume found). */
  log?(message: string): void;
}

/**
 * DAPO's rollouts on vLLM servers, training elsewhere: every rollout of a step samples with that
 * step's adapter, saved and loaded on every server first (resumably, see createAdapterSync);
 * every completion is remembered with its token ids and log-probs, and the trained policy's
 * recomputed old log-probs are compared with them (see createTokenExactCheck). Each step's
 * metrics: the log-prob gaps, the adapter version its rollouts used (-1 when none ran) and the
 * servers in rotation.
 */
export function createVllmRollouts<Policy extends TrainablePolicy>(settings: VllmRolloutsSettings<Policy>): RolloutBackend<Policy> {
  const servers = createVllmServers(settings.servers);
  const adapterDir = resolve(settings.adapterDir);
  const { statePath, adapterPrefix } = settings;
  const sync = createAdapterSync({
    servers,
    prefix: adapterPrefix,
    pathOf: (version) => join(adapterDir, `${adapterPrefix}-step${version}`),
    saveAdapter: (_version, path) => settings.saveAdapter(path),
    readState: () => (existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')) as AdapterSyncState) : undefined),
    writeState: (state) => writeFileAtomic(statePath, `${JSON.stringify(state, null, 2)}\n`),
    ...(settings.log ? { log: settings.log } : {}),
  });
  const check = createTokenExactCheck({
    maxMeanGap: settings.maxMeanLogprobGap,
    maxTokenGap: settings.maxTokenLogprobGap,
    sampler: `the vLLM servers (${settings.servers.urls.join(', ')})`,
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
    trainingPolicy: check.wrap(settings.policy),
    prepare: () => sync.recover(),
    stepMetrics() {
      const figures = check.takeFigures();
      const version = rolloutVersion ?? -1;
      rolloutVersion = undefined;
      return { ...figures, adapterVersion: version, vllmServers: servers.urls.length };
    },
  };
}
