/**
 * @agentflow/prm: process reward models. Label planner steps (LLM judge, Monte-Carlo,
 * consensus of both), train a regression-head PRM, score steps for the trainer, and
 * measure how good a PRM is.
 */

/** The example format: a step as the PRM sees it, its label and where the label came from. */
export {
  labellerSchema,
  labelProvenanceSchema,
  prmExampleSchema,
  prmStepSchema,
  type LabelProvenance,
  type Labeller,
  type PrmExample,
  type PrmStep,
} from './example/prm-example';
/** One PRM step per planner decision of a core Trajectory. */
export { extractSteps } from './example/extract-steps';
/** The text the PRM (and the judge) reads for one decision; never any tool output. */
export { renderStepInput } from './example/render-input';

/** Regression metrics: MSE, the constant predictor's MSE, Pearson, Spearman (average ranks). */
export {
  averageRanks,
  constantPredictorMse,
  mean,
  meanSquaredError,
  pearson,
  spearman,
} from './metrics/regression';
/** Best-of-N accuracy ranking trajectories by the min or product of step scores. */
export {
  aggregateStepScores,
  bestOfNAccuracy,
  type BestOfNResult,
  type ScoredTrajectory,
  type StepAggregation,
} from './metrics/best-of-n';
/** First-error F1 in the ProcessBench sense. */
export {
  firstErrorF1,
  firstErrorIndex,
  type FirstErrorCase,
  type FirstErrorF1Result,
  type FirstErrorF1Settings,
} from './metrics/first-error-f1';
/** Every metric on a held-out set at once. */
export { evaluatePrm, labelMean, type PrmEvaluation, type PrmEvaluationSettings } from './metrics/evaluate-prm';
/** The calibration plot: held-out labels binned by predicted score. */
export { type CalibrationBin, calibrationBins } from './metrics/calibration';

/** What labellers return. */
export type { LabelFailure, LabelResult } from './label/label-result';
/** Token prices of the judge (DeepSeek defaults) and the cost of one call. */
export { costOfUsage, tokenPricesSchema, type TokenPrices } from './label/token-prices';
/** The judge's structured output. */
export { judgeOutputSchema, type JudgeOutput } from './label/judge-output';
/** The judge's prompt and its version (part of the cache key). */
export { JUDGE_PROMPT_VERSION, judgeMessages } from './label/judge-prompt';
/** The persistent cache of judged steps. */
export {
  createJudgeCache,
  judgeCacheKey,
  judgeCacheRecordSchema,
  type JudgeCache,
  type JudgeCacheRecord,
} from './label/judge-cache';
/** The LLM-judge labeller. */
export {
  createJudgeLabeller,
  judgeInput,
  type JudgeLabeller,
  type JudgeLabellerSettings,
  type JudgeLabellerStats,
} from './label/judge-labeller';
/** The Monte-Carlo labeller. */
export {
  createMonteCarloLabeller,
  type CompleteFromPrefix,
  type MonteCarloLabelKind,
  type MonteCarloLabeller,
  type MonteCarloLabellerSettings,
  type TrajectoryPrefix,
} from './label/monte-carlo-labeller';
/** Consensus filtering of judge and Monte-Carlo labels. */
export {
  consensusFilter,
  consensusSettingsSchema,
  type ConsensusResult,
  type ConsensusSettings,
} from './label/consensus';
/** The planner steps of trajectories to label, and the error when a PRM would have nothing to learn from them. */
export {
  collectedSteps,
  nothingCollectedError,
  type CollectedSteps,
  type CollectedStepsAdvice,
} from './label/collected-steps';
/** Who labelled, as messages name it, and the error of a labeller that labelled nothing. */
export {
  nothingLabelledError,
  type JudgeDescription,
  type LabellerDescription,
  type MonteCarloDescription,
} from './label/nothing-labelled-error';
/** The judge and Monte-Carlo labellers behind one interface, as `labelTrajectoriesToFile` drives them. */
export {
  createJudgeLabelling,
  createMonteCarloLabelling,
  type JudgeLabellingSettings,
  type MonteCarloLabellingSettings,
  type StepLabelling,
} from './label/step-labelling';
/** The resumable labelling of trajectories into a labels file and a summary. */
export { labelTrajectoriesToFile, type LabelSummary, type LabelTrajectoriesSettings } from './label/label-file';

/** The PRM: settings (what trains with the head: `trainable`, head, LoRA or full), the model, training settings and report. */
export {
  prmBackboneSchema,
  prmSettingsSchema,
  DEFAULT_PRM_MAX_TOKENS,
  prmInputTokenEstimate,
  prmTrainableSchema,
  resolvePrmTrainable,
  type PrmBackbone,
  type PrmConfig,
  type PrmSettings,
  type PrmTrainable,
  type PrmTrainableSettings,
} from './model/prm-settings';
export {
  DEFAULT_PRM_TRAINING_BATCH_SIZE,
  prmTrainingSettingsSchema,
  type PrmEpochRecord,
  type PrmTrainingConfig,
  type PrmTrainingReport,
  type PrmTrainingSettings,
} from './model/prm-training-settings';
export { createPrm, type Prm } from './model/prm';
/** The planner's confidence in a trajectory, the head's extra inputs with `confidence` on. */
export {
  CONFIDENCE_FEATURE_COUNT,
  type ConfidenceFeatureSet,
  type ConfidenceSetting,
  confidenceFeatureCount,
  confidenceFeatureSet,
  confidenceFeatures,
} from './model/confidence-features';
/** The regression head and its loss (as graph nodes for training, in float64 for validation). */
export type { HeadParameters } from './model/head-graph';
export { meanPrmLoss, PRM_LOSSES, type PrmLoss } from './model/prm-loss';
/** Checkpoints: `prm-config.json`, `prm-head.safetensors`, `adapter/` (PEFT), `backbone/` (a backbone trained in full, an HF folder). */
export {
  loadPrm,
  PRM_ADAPTER_DIR,
  PRM_BACKBONE_DIR,
  PRM_CONFIG_FILE,
  PRM_HEAD_FILE,
  prmCheckpointSchema,
  savePrm,
  type PrmCheckpoint,
} from './model/checkpoint';
/** The PRM as a core `StepScorer` for the trainer. */
export { createPrmScorer } from './model/prm-scorer';
/** The trajectory-level split the trainer uses (exposed for evaluation scripts). */
export { splitByTrajectory } from './model/training-loop';
