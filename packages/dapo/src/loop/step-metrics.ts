/** What one training step reports (through `onMetrics`). */
export interface DapoStepMetrics {
  /** Steps completed, this one included (1-based). */
  step: number;
  /** Mean reward (outcome plus overlong penalty) over every rollout generated this step, dropped groups included. */
  reward: number;
  /** Fraction of the rollouts generated this step that the outcome checker marked correct. */
  accuracy: number;
  groupsKept: number;
  groupsGenerated: number;
  groupsDropped: number;
  /** Rollouts spent on groups that dynamic sampling dropped. */
  rolloutsDropped: number;
  /** Informative groups generated beyond the batch size and discarded. */
  groupsSurplus: number;
  /**
   * Kept groups whose outcome rewards were all equal: trained on for their PRM step scores
   * (dynamicSampling.signal 'prm' or 'either'), or kept by dynamic sampling 'off'.
   */
  equalOutcomeGroups: number;
  /**
   * The PRM on this step's own rollouts (every generated group, dropped ones included): the
   * mean squared gap between its score of each rollout's last decision and the outcome, and the
   * constant predictor's (see {@link prmOutcomeFit}). Null without step scores (outcome, gigpo).
   * Their ratio climbing over the steps would mean the PRM goes stale as the policy moves.
   */
  prmOutcomeMse: number | null;
  prmOutcomeMseConstant: number | null;
  generationRounds: number;
  /** Completions (planner steps) trained on and their tokens. */
  completions: number;
  tokens: number;
  /** Mean over optimiser updates of the loss. */
  loss: number;
  /** Token-weighted means over the updates; null when the policy does not report them. */
  clipFraction: number | null;
  approxKl: number | null;
  /**
   * Token mean of the k3 estimate of KL(policy || reference) on the batch, before the step's
   * updates: how far training has moved the policy from its reference (what the KL term
   * pulls back). Null without a reference policy.
   */
  referenceKl: number | null;
  entropy: number | null;
  /**
   * Mean |old - sampling| log-prob over tokens whose sampler reported log-probs: how far the
   * sampling engine (vLLM, Ollama, the local generator) is from the training engine. Null when none did.
   */
  samplerMismatch: number | null;
  /** Mean gradient norm (before clipping) over the updates. */
  gradNorm: number;
  optimizerUpdates: number;
  learningRate: number;
  seconds: number;
  /** Completion tokens trained on per second of the whole step (rollouts included). */
  tokensPerSecond: number;
  /** What the evaluation function returned, on the steps where it ran. */
  evaluation?: Record<string, number>;
}

/** Token-weighted running mean that stays null while nothing was reported. */
export function createWeightedMean() {
  let sum = 0;
  let weight = 0;
  return {
    add(value: number | undefined, tokens: number) {
      if (value === undefined || !Number.isFinite(value) || tokens <= 0) return;
      sum += value * tokens;
      weight += tokens;
    },
    value(): number | null {
      return weight === 0 ? null : sum / weight;
    },
  };
}
