/**
 * @agentflow/dapo: DAPO (decoupled clipping, dynamic sampling, token-level loss, soft
 * overlong punishment) with step-level credit from a process reward model, as pure math
 * over typed arrays and as a training loop over core's TrainablePolicy.
 */

/** Group statistics used by every advantage estimator. */
export { mean, standardDeviation, standardize, type StdEstimator } from './math/statistics';
/** Outcome advantages A = (R - mean) / (std + eps), per group. */
export { batchGroupAdvantages, groupAdvantages, type GroupAdvantageSettings } from './math/group-advantages';
/** Step credit: outcome broadcast, DeepSeekMath process sum, PURE min-form, their mix, and GiGPO's step groups. */
export {
  assignStepCredit,
  needsStepScores,
  softMinWeighted,
  suffixSums,
  type GroupCreditInput,
  type ProcessCredit,
  type StepCredit,
} from './math/step-credit';
/** GiGPO's step level: discounted step returns, normalised among the steps that share a state. */
export { discountedStepReturns, stepGroupAdvantages } from './math/gigpo';
export { stepStateKeys } from './loop/step-states';
/** Step advantages onto completion tokens (each step is its own completion). */
export { expandStepAdvantages } from './math/token-advantages';
export { type LearningRateSchedule, learningRateAt } from './math/learning-rate';
/** Token weights for 'token-mean' (DAPO), 'sequence-mean' (GRPO) and 'dr-grpo' aggregation. */
export { aggregationTokenWeights, type LossAggregation, type TokenWeightSettings } from './math/token-weights';
/** The clipped surrogate with its exact gradient with respect to the new log-probs. */
export {
  clippedSurrogate,
  type ClippedSurrogateInput,
  type ClippedSurrogateResult,
  type ClippedSurrogateSettings,
} from './math/clipped-surrogate';
/** The loss of a batch of ragged completions (weights plus surrogate in one call). */
export { sequenceSurrogateLoss, type SequenceLossResult, type SurrogateSequence } from './math/sequence-loss';
/** Soft overlong punishment and truncation masks. */
export { completionMask, softOverlongPenalty, type OverlongSettings } from './math/overlong';
/** Dynamic sampling: the population-std filter and the refill loop with its round cap. */
export { DEFAULT_STD_THRESHOLD, filterGroups, isInformativeGroup, type GroupFilterResult } from './sampling/group-filter';
export { collectGroups, type CollectGroupsSettings, type CollectedGroups, type DynamicSampling } from './sampling/collect-groups';
/** What dynamic sampling keeps a group for: differing outcomes, varying PRM step scores, or either. */
export {
  DEFAULT_PRM_STD_THRESHOLD,
  hasGroupSignal,
  resolveGroupSignal,
  stepScoresVary,
  type GroupSignal,
  type GroupSignalSettings,
} from './sampling/group-signal';
/** The configuration: every hyper-parameter documented, defaults cited. */
export { dapoConfigSchema, parseDapoConfig, type DapoConfig, type DapoConfigInput } from './config/dapo-config';
/** The training loop. */
export { createDapoTrainer, type DapoTrainer, type DapoTrainerSettings } from './loop/dapo-trainer';
export type { OutcomeScore, ScoredGroup } from './loop/scored-group';
export type { DapoStepMetrics } from './loop/step-metrics';
/** The PRM's fit to one step's rollouts against their outcomes: whether it stays fresh as the policy moves. */
export { type PrmOutcomeFit, prmOutcomeFit } from './loop/prm-freshness';
export { buildMicroBatches, buildTrainingRows, logprobsInLengthOrder, microBatchRanges, miniBatchRowIndices, type MicroBatchSettings, type TrainingRow } from './loop/training-rows';
export { createDataCursor, type DataCursor, type DataCursorState } from './loop/data-cursor';
export { loadLatestCheckpoint, saveCheckpoint, type TrainerState } from './loop/checkpoint-store';
/*
 * The clipped surrogate as an ONNX graph on @agentflow/tensor is the subpath export
 * `@agentflow/dapo/graph` (src/graph/index.ts), so that this entry needs no tensor engine.
 */
