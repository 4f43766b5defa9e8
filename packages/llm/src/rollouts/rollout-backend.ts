import type { LanguageModel, TrainablePolicy } from '@agentflow/core';

/** Where a trainer's rollouts are sampled, and the policy it trains on them. */
export interface RolloutBackend<Policy extends TrainablePolicy = TrainablePolicy> {
  /** The policy's model for rollouts and in-training evaluations. */
  languageModel: LanguageModel;
  /** The policy to train (for vLLM: its old log-probs checked against the servers'). */
  trainingPolicy: Policy;
  /** Before the first rollout (after a resume too): puts the back end in a known state. */
  prepare(): Promise<void>;
  /** Figures of the step just taken, for its metrics row; the next step starts afresh. */
  stepMetrics(): Record<string, number>;
}

/** Settings for {@link createLocalRollouts}. */
export interface LocalRolloutsSettings<Policy extends TrainablePolicy> {
  /** The policy as a chat model (createPolicyModel): rollouts sample in-process. */
  languageModel: LanguageModel;
  policy: Policy;
}

/** Rollouts sampled in-process by the trained policy itself: nothing to prepare, no figures of its own. */
export function createLocalRollouts<Policy extends TrainablePolicy>(settings: LocalRolloutsSettings<Policy>): RolloutBackend<Policy> {
  return { languageModel: settings.languageModel, trainingPolicy: settings.policy, prepare: async () => {}, stepMetrics: () => ({}) };
}
