export {
  AgentFlowError,
  assertNever,
  describeValue,
  type AgentFlowErrorCode,
  type AgentFlowErrorSettings,
} from './errors/agentflow-error';
export { chatMessageSchema, chatRoleSchema, type ChatMessage, type ChatRole } from './schemas/chat';
export {
  FINISH_ACTION,
  plannerActionSchema,
  toolCallSchema,
  toolResultSchema,
  type PlannerAction,
  type ToolCall,
  type ToolResult,
} from './schemas/planner-action';
export {
  llmVerdictSchema,
  verdictReasonSchema,
  verdictSchema,
  type LlmVerdict,
  type Verdict,
  type VerdictReason,
} from './schemas/verdict';
export { stepSchema, type Step } from './schemas/step';
export { terminationSchema, trajectorySchema, type Termination, type Trajectory } from './schemas/trajectory';
export { runEventSchema, type RunEvent, type RunEventListener } from './schemas/run-event';
export type { ChatRequest, ChatResponse, LanguageModel } from './interfaces/language-model';
export type { Tool, ToolContext } from './interfaces/tool';
/** A teacher's actions for one task, and whether they are exact: what a task source demonstrates and a warm start replays. */
export type { Demonstration } from './interfaces/demonstration';
export type {
  MemoryQuery,
  MemoryRecord,
  MemorySearchMode,
  MemorySearchResult,
  MemoryStore,
} from './interfaces/memory-store';
export { type StepScorer, type StepScoringInput, stepObservation, stepScoringInputs } from './interfaces/step-scorer';
export type {
  OptimizerStepSettings,
  PolicyBatch,
  PolicyGenerateRequest,
  PolicyGeneration,
  PolicyLoadSettings,
  PolicyObjective,
  PolicyTrainingBatch,
  PolicyTrainingStats,
  TrainablePolicy,
} from './interfaces/trainable-policy';
/** A response body read as text, streaming, stopped at a byte cap (RESPONSE_TOO_LARGE). */
export { formatByteCount, readLimitedBody, type ReadLimitedBodySettings } from './http/read-limited-body';
export { createRandom, type Random, type RandomState } from './random/seeded-random';
/**
 * A run directory's files: JSONL read line by line through a fixed buffer (a regular file only,
 * each line capped, UTF-8 checked; `forEachJsonlRecord` folds a file of any size), files written
 * atomically (a full disk is DISK_FULL with the previous version intact), and one writer per
 * directory (`acquireRunDirectoryLock`: a second is RUN_LOCKED naming the holder).
 */
export {
  appendJsonl,
  DEFAULT_MAX_JSONL_DEPTH,
  DEFAULT_MAX_JSONL_LINE_BYTES,
  forEachJsonlRecord,
  readJsonl,
  type ReadJsonlSettings,
} from './jsonl/jsonl';
export { syncDirectory, writeFileAtomic } from './jsonl/write-file-atomic';
export { diskFullError, isDiskFullError, type DiskFullErrorSettings } from './jsonl/disk-full';
export { fileKindOf, openRegularFile, readSmallRegularFile, type OpenRegularFileSettings } from './jsonl/regular-file';
export { firstInvalidUtf8Byte, lineOfByte } from './text/first-invalid-utf8';
export { type DepthExcess, findJsonDepthExcess } from './text/json-depth';
export {
  acquireRunDirectoryLock,
  RUN_DIRECTORY_LOCK_FILE,
  runDirectoryLockOwnerSchema,
  type RunDirectoryLock,
  type RunDirectoryLockOwner,
  type RunDirectoryLockSettings,
} from './run-directory/run-directory-lock';
export { isProcessAlive, processStartTime } from './run-directory/process-start-time';
export { formatZodIssues } from './errors/format-zod-issues';
/** Rows of prompt and completion ids taken shortest first, so each run of them pads little. */
export { lengthOrder, rowLength } from './batching/length-order';
/** The learning-rate schedule (linear warm-up, then constant or a half cosine) every optimiser loop uses. */
export { scheduledLearningRate, type LearningRateDecay, type WarmupDecaySchedule } from './schedule/learning-rate';
/** Resumable runs: a ledger of finished stages in one atomically replaced file, and the loop that skips them. */
export {
  openStageLedger,
  runStages,
  stageStateSchema,
  type Stage,
  type StageLedger,
  type StageLedgerSettings,
  type StageState,
} from './stages/stage-ledger';
export { type MetricsListener, type MetricsRow, openRunDirectory, type OpenRunDirectorySettings, type RunDirectory } from './stages/run-directory';
/** A new run directory started from stages another run finished (a sweep's shared warm start). */
export { copyFinishedStages, type CopyFinishedStagesSettings } from './stages/copy-finished-stages';
/**
 * The one rule for structured model replies (judge, LLM verifier, planner): required fields
 * checked with their types and ranges, keys the schema does not name dropped and reported as
 * dotted paths; the schema sent for constrained decoding stays closed.
 */
export { parseModelReply, type ModelReplyResult } from './schemas/parse-model-reply';
/**
 * The config loader of a command over these packages: a YAML or JSON file read as bounded
 * UTF-8 text, `--set KEY.PATH=VALUE` overrides laid over it (a missing block starts at the
 * built-in default's `kind`), validated against any zod schema with one error line per problem
 * naming the file or the `--set` that put the value there.
 */
export {
  checkTextNesting,
  checkValueDepth,
  MAX_CONFIG_BYTES,
  MAX_CONFIG_DEPTH,
  readConfigText,
} from './config/config-text';
export {
  loadConfig,
  readConfigFile,
  validateConfig,
  type ConfigOrigin,
  type LoadConfigSettings,
} from './config/load-config';
export {
  applyOverrides,
  isPlainObject,
  collectOverrides,
  parseOverride,
  type ApplyOverridesSettings,
  type ConfigOverride,
} from './config/overrides';
/** Optional peer dependencies loaded on first use, with an error naming the package when missing. */
export {
  importOptional,
  isMissingPackageError,
  requireOptional,
  type OptionalDependencySettings,
} from './modules/optional-dependency';
