import { join } from 'node:path';
import { assertNever, type LanguageModel, type TrainablePolicy } from '@agentflow/core';
import type { ChatTokenizer } from '../policy/policy-model';
import { createVllmRollouts } from '../vllm/vllm-rollouts';
import { createLocalRollouts, type RolloutBackend } from './rollout-backend';
import type { RolloutsSettings } from './rollouts-settings';

/** Where the adapter versions of a vLLM run are recorded: the run's rollout state. */
export const vllmStatePath = (runRoot: string) => join(runRoot, 'vllm-adapters.json');

/** Settings of {@link createRolloutBackend}. */
export interface RolloutBackendSettings<Policy extends TrainablePolicy> {
  /** Which back end, parsed by rolloutsSettingsSchema. */
  rollouts: RolloutsSettings;
  /** Token limit and temperature of a vLLM completion whose request sets none. */
  sampling: { maxNewTokens: number; temperature: number };
  /** The policy being trained. */
  policy: Policy;
  /** The policy as a chat model (createPolicyModel): the local back end's rollouts. */
  languageModel: LanguageModel;
  /** The policy's tokenizer: vLLM prompts are rendered to token ids with it. */
  tokenizer: ChatTokenizer;
  /** Writes the trained adapter as it is now as a PEFT folder at `path`, its base model the folder the servers serve. */
  saveAdapter(path: string): Promise<void>;
  /** The run directory: adapters under `<runRoot>/adapters` (unless `rollouts.adapterDir`), the state at {@link vllmStatePath}. */
  runRoot: string;
  /** Optimiser steps taken so far: the adapter version rollouts must use. */
  version(): number;
  /** Told what the adapter sync does. */
  log?(message: string): void;
  /** Told when a vLLM server leaves the rotation (default console.warn). */
  warn?(message: string): void;
}

/** The rollout back end of `settings.rollouts`: in-process, or on vLLM servers with the run's adapter folder and state. */
export function createRolloutBackend<Policy extends TrainablePolicy>(settings: RolloutBackendSettings<Policy>): RolloutBackend<Policy> {
  const { rollouts, policy } = settings;
  switch (rollouts.kind) {
    case 'local':
      return createLocalRollouts({ languageModel: settings.languageModel, policy });
    case 'vllm':
      return createVllmRollouts({
        servers: {
          urls: rollouts.urls,
          model: rollouts.model,
          tokenizer: settings.tokenizer,
          guidedDecoding: rollouts.guidedDecoding,
          concurrency: rollouts.concurrency,
          timeoutMs: rollouts.timeoutMs,
          maxTokens: settings.sampling.maxNewTokens,
          temperature: settings.sampling.temperature,
          ...(settings.warn ? { warn: settings.warn } : {}),
        },
        policy,
        saveAdapter: (path) => settings.saveAdapter(path),
        adapterPrefix: rollouts.adapterPrefix,
        adapterDir: rollouts.adapterDir ?? join(settings.runRoot, 'adapters'),
        statePath: vllmStatePath(settings.runRoot),
        version: () => settings.version(),
        maxMeanLogprobGap: rollouts.maxMeanLogprobGap,
        maxTokenLogprobGap: rollouts.maxTokenLogprobGap,
        ...(settings.log ? { log: settings.log } : {}),
      });
    default:
      return assertNever(rollouts, 'policy.rollouts kind');
  }
}
