/** A request to sample one completion from a local policy. */
export interface PolicyGenerateRequest {
  promptIds: number[];
  maxTokens: number;
  temperature: number;
  topP?: number;
  topK?: number;
  seed?: number;
  stop?: string[];
  /** Constrain the output to JSON valid under this schema. */
  jsonSchema?: Record<string, unknown>;
}

export interface PolicyGeneration {
  tokenIds: number[];
  text: string;
  /** Log-probs of the sampled tokens under the sampling distribution's model. */
  logprobs: number[];
  finishReason: 'stop' | 'length';
}

/** Token-aligned rows: row i belongs to prompt i. */
export interface PolicyBatch {
  promptIds: number[][];
  completionIds: number[][];
}

/** What the loss is, so the policy can build its training graph once. */
export type PolicyObjective =
  | {
      kind: 'clipped-surrogate';
      epsLow: number;
      epsHigh: number;
      /** Coefficient of the k3 KL estimator against the reference policy; 0 turns it off. */
      klCoefficient: number;
    }
  | { kind: 'nll' };

/**
 * One micro-batch of a training step. Per-token arrays align with `completionIds`.
 * The loss is sum(weight * term) over tokens: the caller sets `tokenWeights` so that
 * micro-batches add up to the batch's aggregation (token-mean, sequence-mean, Dr. GRPO).
 */
export interface PolicyTrainingBatch extends PolicyBatch {
  objective: PolicyObjective;
  advantages?: number[][];
  oldLogprobs?: number[][];
  referenceLogprobs?: number[][];
  tokenWeights: number[][];
}

export interface PolicyTrainingStats {
  loss: number;
  tokens: number;
  clipFraction?: number;
  approxKl?: number;
  entropy?: number;
}

export interface OptimizerStepSettings {
  learningRate: number;
  maxGradNorm?: number;
}

/** A policy that can be sampled and trained: the planner as the trainer sees it. */
export interface TrainablePolicy {
  generate(requests: PolicyGenerateRequest[]): Promise<PolicyGeneration[]>;
  logprobs(batch: PolicyBatch): Promise<number[][]>;
  /** Adds the gradients of one micro-batch to the accumulator. */
  accumulateGradients(batch: PolicyTrainingBatch): Promise<PolicyTrainingStats>;
  /** Applies the accumulated gradients with the optimiser, then clears them. */
  applyGradients(settings: OptimizerStepSettings): Promise<{ gradNorm: number }>;
  /** Saves the trainable parameters in the PEFT layout, plus optimiser state. */
  save(dir: string): Promise<void>;
  /**
   * Loads what `save` wrote. `optimizerState: false` loads the parameters only and starts the
   * optimiser afresh: the right start for a new training phase (DAPO after a supervised warm
   * start), whose gradients the old moments would mis-scale; the default restores it (resume).
   */
  load(dir: string, settings?: PolicyLoadSettings): Promise<void>;
}

/** How {@link TrainablePolicy.load} treats the saved optimiser state. */
export interface PolicyLoadSettings {
  /** Restore the optimiser's moments and step count (default true). */
  optimizerState?: boolean;
}
