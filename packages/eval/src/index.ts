/**
 * @agentflow/eval: benchmark loaders, answer checking, metrics, leakage checks, the
 * built-in task world and the task sources over them. Every export is documented at its
 * declaration.
 */

// Datasets.
export { type BenchmarkItem, stripAnswerInstruction, yearFromId } from './datasets/benchmark-item';
export { type DuplicateIdPolicy, type FieldMapping, fieldMappingSchema } from './datasets/field-mapping';
/** AgentFlow's ten benchmarks: their files, fields, checkers, judge modes and tools; a name or path resolved to a file; a file read as its benchmark. */
export {
  AGENTFLOW_BENCHMARK_NAMES,
  AGENTFLOW_BENCHMARKS,
  type AgentFlowBenchmark,
  type AgentFlowBenchmarkName,
  benchmarkOfPath,
  type BenchmarkDataSettings,
  type BenchmarkTool,
  DATASETS_DIR_ENV,
  isAgentFlowBenchmarkName,
  loadAgentFlowBenchmark,
  resolveBenchmarkData,
} from './datasets/agentflow-benchmarks';
export {
  AGENTFLOW_JSON_FIELDS,
  AIME_CSV_FIELDS,
  loadAgentFlowJson,
  loadBenchmark,
  loadCsvBenchmark,
  loadJsonlBenchmark,
  parseAgentFlowJson,
  parseCsvBenchmark,
  parseJsonlBenchmark,
} from './datasets/load-benchmark';
export { parseCsv, parseCsvRecords } from './datasets/parse-csv';
/** What a benchmark file is checked against before it is parsed: a regular file, its size, UTF-8, JSONL line length, nesting. */
export {
  type DatasetReadLimits,
  datasetReadLimitsSchema,
  decodeDatasetText,
  readDatasetBytes,
  readDatasetText,
  resolveDatasetReadLimits,
  type ResolvedDatasetReadLimits,
} from './datasets/read-dataset-file';
export { type DatasetSource, loadDataset } from './datasets/load-dataset';
export { type ItemFilter, selectItems } from './datasets/select-items';

// Answers.
export { type ArithmeticResult, type ArithmeticSettings, evaluateArithmetic } from './answers/arithmetic-expression';
export {
  type AnswerCheck,
  type AnswerChecker,
  type AnswerCheckerSettings,
  type AnswerFormat,
  answerFormatFor,
  type CheckableItem,
  type CheckMethod,
  checkAnswer,
  createAnswerChecker,
} from './answers/check-answer';
export { type ExtractedAnswer, type ExtractionMethod, extractAnswer, isFormatted, lastBoxed } from './answers/extract-answer';
export { checkGameOf24, type GameOf24Result } from './answers/game-of-24';
export {
  createLlmJudge,
  type JudgeResult,
  type JudgeVerdict,
  judgeVerdictSchema,
  type LlmJudge,
  type LlmJudgeSettings,
} from './answers/llm-judge';
export { canonicalMathString, latexToPlain, parseNumericAnswer } from './answers/math-answer';
export { formatRational, type Rational } from './answers/rational';
export { checkChoice, exactMatch, extractChoice, normalizeShortAnswer } from './answers/short-answer';
/** The benchmarks' rule checkers: token F1 of QA answers, GAIA's quasi-exact match, multiple-choice options and letters. */
export { tokenF1 } from './answers/qa-f1';
export { gaiaQuasiExactMatch } from './answers/gaia-answer';
export {
  CHOICE_LETTERS,
  choiceIndexOf,
  type ChoiceOption,
  formatChoiceOptions,
  letteredOptions,
  pickedChoiceIndex,
} from './answers/choice-options';
export {
  type BenchmarkCheck,
  type BenchmarkCheckableItem,
  type BenchmarkCheckerName,
  checkBenchmarkAnswer,
} from './answers/benchmark-checker';
/** The LLM judge of AgentFlow's paper (its scoring script's prompts): direct, or extract-then-verify for multiple choice. */
export {
  type AgentFlowJudge,
  type AgentFlowJudgeInput,
  type AgentFlowJudgeMode,
  type AgentFlowJudgeResult,
  type AgentFlowJudgeSettings,
  agentFlowExtractionSchema,
  agentFlowVerificationSchema,
  createAgentFlowJudge,
  judgedResponse,
  nearestListedOption,
} from './answers/agentflow-judge';
export {
  createSympyEquivalence,
  type SympyBatchResult,
  type SympyEquivalence,
  type SympyEquivalenceSettings,
  toSympySyntax,
} from './answers/sympy-equivalence';

// Metrics.
export { accuracy, type ProportionEstimate, wilsonInterval, Z_95 } from './metrics/accuracy';
export {
  type BootstrapResult,
  comparePairedRuns,
  type McNemarResult,
  mcnemarExact,
  type PairedComparison,
  type PairedComparisonSettings,
  pairedBootstrap,
} from './metrics/paired-comparison';
export { avgAtK, meanPassAtK, passAtK } from './metrics/pass-at-k';
/** Where outcome credit misleads: successful trajectories with a bad step, failed ones with a good step. */
export {
  type LabelledTrajectory,
  type StepOutcomeDisagreement,
  type StepOutcomeDisagreementSettings,
  stepOutcomeDisagreement,
} from './metrics/step-outcome-disagreement';
export { type CollectedStepOutcome, stepOutcomeOfFiles } from './metrics/step-outcome-files';
/** `summary.json` of a pipeline run (agentflow run): accuracies with intervals, the PRM, where outcome and labels disagree, the stages' checks. */
export { type EvaluationSummary, evaluationSummarySchema, type RunCheck, type RunSummary, runSummarySchema } from './metrics/run-summary';
/** Whether the PRM went stale during DAPO: its fit to the rollouts' outcomes over the first and the last steps, from a run's metrics rows. */
export { type PrmOnPolicy, prmOnPolicy } from './metrics/prm-on-policy';
export { type TrajectoryStats, trajectoryStats } from './metrics/trajectory-stats';

// Statistics: one bootstrap, one t interval, every caller's.
/** The nonparametric bootstrap and its percentile interval (the order statistics at (B + 1) alpha / 2 from each end). */
export { type BootstrapSettings, bootstrapInterval, bootstrapReplicates, percentileInterval } from './statistics/bootstrap';
/** Student's t distribution function and quantile, any real degrees of freedom. */
export { studentTCdf, studentTQuantile } from './statistics/student-t';
/** The mean with its Student-t interval, over a few independent values (seeds). */
export { type MeanEstimate, mean, meanWithInterval, tInterval } from './statistics/t-interval';
/** Learning curves over seeds: the mean curve with its t band, and the steps one arm takes to reach another's final accuracy (paired by seed). */
export {
  compareLearningCurves,
  compareLearningCurvesBySeed,
  type LearningCurve,
  type LearningCurveComparison,
  type LearningCurvePoint,
  type MeanCurvePoint,
  meanLearningCurve,
  type SeededLearningCurve,
  type SeedPairedComparison,
  stepToReach,
} from './statistics/learning-curves';
/** A mean over seeds with its t interval, and how many values reach a goal. */
export { type GoalEstimate, meanAgainstGoal } from './statistics/goal-estimate';
/** 1 - error / reference error: e.g. a PRM's MSE reduction against the constant predictor. */
export { skillScore } from './statistics/skill-score';

// Seed sweeps: arms (credits) x seeds, resumable, compared with intervals, as a table and a page.
/** One run of a sweep: its spec, the record a caller reads its directory into, and the failure `runSweep` recorded. */
export {
  readSweepFailure,
  SWEEP_FAILURE_FILE,
  type SweepEvaluation,
  type SweepRunRecord,
  type SweepRunSpec,
  type SweepRunSummary,
} from './sweep/sweep-run';
/** Each arm across its seeds (mean gain and PRM MSE reduction against goals, the mean curve), and process credit against outcome credit by seed. */
export {
  analyseSweepArm,
  compareSweepCredits,
  type CreditComparison,
  type SweepArm,
  sweepGainPoints,
  type SweepGoals,
  sweepPrmReduction,
} from './sweep/sweep-analysis';
/** A run's held-out accuracy curve from its evaluations, and seed lists as a user types them (`0-4`). */
export { heldOutAccuracyCurve, type HeldOutCurveSettings } from './sweep/held-out-curve';
export { parseSeedList } from './sweep/seed-list';
/** The plan of a sweep directory, recorded once and read on resume. */
export { readSweepPlan, recordSweepPlan, type SweepPlanFileSettings, sweepPlanPath } from './sweep/sweep-plan-file';
/** The sweep as Markdown (per-seed table, a line per arm, the comparison) and as a self-contained HTML page with its curves. */
export { renderSweepHtml, renderSweepMarkdown, type SweepReport } from './sweep/render-sweep';
/** The loop over the runs (finished skipped, started resumed, failures recorded) and the outputs rewritten after every run. */
export {
  type RunSweepSettings,
  runSweep,
  type SweepOutcome,
  type SweepOutputSettings,
  sweepRuns,
  writeSweepOutputs,
} from './sweep/run-sweep';

// Reports.
/** A fraction as a percentage with one decimal: 0.4667 -> `46.7%`. */
export { percent } from './report/percent';
/** An inline SVG line or scatter plot (no scripts), with shaded bands; `escapeXml` for the text around it. */
export { escapeXml, type PlotSeries, type PlotSettings, renderSvgPlot } from './report/svg-plot';

// Evaluation.
/** A planner's held-out accuracy: one seeded run per task, scored by the task source, with its Wilson interval. */
export {
  evaluatePlanner,
  type PlannerEvaluation,
  type PlannerEvaluationJob,
  type PlannerEvaluationSettings,
  type PlannerEvaluationSummary,
} from './evaluation/evaluate-planner';

// Benchmark evaluation: an agent on a benchmark file, in a resumable, append-only eval directory.
/** The experiment an eval records (compared on resume), its defaults, and resolving a caller's partial settings. */
export {
  BENCHMARK_EVAL_DEFAULTS,
  type BenchmarkEvalSettings,
  benchmarkEvalSettingsSchema,
  datasetFormatSchema,
  type EvalConfigFile,
  evalConfigFileSchema,
} from './benchmark-eval/benchmark-eval-settings';
/** Dataset settings as a user types them on a command line (`1983,2023`, `id=pid,question=problem`). */
export { parseDatasetFormat, parseFieldMapping, parseToolsOption, parseYearRange } from './benchmark-eval/dataset-option-values';
export {
  benchmarkFileSha256,
  type BenchmarkEvalSettingsInput,
  datasetFormatOf,
  resolveBenchmarkEvalSettings,
} from './benchmark-eval/resolve-benchmark-eval-settings';
/**
 * Every (item, sample) run once, records appended as runs finish, `eval.json` and `eval.html` at the
 * end; a resume sends nothing for a recorded run. `rewriteEvalPage` renders `eval.html` again.
 */
export {
  BENCHMARK_EVAL_STAGE,
  type BenchmarkEvalResult,
  rewriteEvalPage,
  runBenchmarkEval,
  type RunBenchmarkEvalSettings,
} from './benchmark-eval/run-benchmark-eval';
/** `eval.html`: the summary with its intervals and pass@k, and a filterable row per run. */
export { type EvalPageItem, type EvalPageSettings, renderEvalPage, writeEvalPage } from './benchmark-eval/eval-page';
/** The eval's agent over flow's `createAgent`, from the models the caller opens. */
export {
  type BenchmarkEvalAgent,
  type BenchmarkEvalAgentSettings,
  type BenchmarkEvalModels,
  type BenchmarkEvalRun,
  createBenchmarkEvalAgent,
} from './benchmark-eval/eval-agent';
/** The files of an eval directory: eval-config.json, eval.jsonl, trajectories.jsonl, eval.json. */
export {
  type EvalDirectory,
  type EvalDirectoryWording,
  evalDirectoryOf,
  isEvalDirectory,
  openEvalDirectory,
  type OpenEvalDirectorySettings,
  readEvalConfig,
  readEvalRecords,
  readEvalTrajectories,
} from './benchmark-eval/eval-directory';
/** One line of eval.jsonl per run, and the metrics over them (accuracy with its Wilson interval, pass@k, avg@k). */
export {
  type EvalJudgeRecord,
  evalJudgeRecordSchema,
  type EvalRecord,
  evalRecordOf,
  evalRecordSchema,
  evalRunKey,
} from './benchmark-eval/eval-record';
export { type EvalScores, type EvalSummary, formatEvalSummary, summarizeEval } from './benchmark-eval/eval-summary';
/** Both scores of a run: the benchmark's rule checker, and the paper's judge when the eval has one. */
export { createEvalScorer, evalChecker, type EvalRunScore, type EvalScorer } from './benchmark-eval/eval-scorer';
/** Where two JSON values first differ (the dotted key): how a resume names the setting that changed. */
export { firstDifference, type JsonDifference } from './benchmark-eval/first-difference';

// Leakage.
export { assertNoLeakage, type LeakageCheckSettings, leakageError, withoutLeakedItems } from './leakage/assert-no-leakage';
export {
  findNearDuplicates,
  type LeakageCandidate,
  type NearDuplicateSettings,
  nearDuplicateSettingsSchema,
  type SuspectedPair,
} from './leakage/find-near-duplicates';
export { leakageTokens, normalizeForLeakage } from './leakage/normalize-text';

// The built-in task world.
export { checkTaskWorldAnswer } from './task-world/check-task-world-answer';
export { type CorpusSearch, type CorpusSearchHit, createCorpusSearch, formatCorpusSearchOutput } from './task-world/corpus-search';
export { createTaskWorld, type TaskWorld } from './task-world/create-task-world';
/** The counted things of the task world: `cats`, `dogs`, `hens`. */
export { ATTRIBUTES as TASK_WORLD_ATTRIBUTES } from './task-world/templates';
/** The world's stale entries (`decoyRate`): the mark their text carries and the word a check adds to a lookup. */
export { CURRENT_FACT_WORD as TASK_WORLD_CHECK_WORD, STALE_FACT_MARK as TASK_WORLD_STALE_MARK } from './task-world/stale-facts';
export {
  type ResolvedTaskWorldSettings,
  type TaskWorldSettings,
  taskWorldSettingsSchema,
} from './task-world/task-world-settings';
export {
  TASK_WORLD_PYTHON_TOOL,
  TASK_WORLD_SEARCH_TOOL,
  type TaskWorldDemonstration,
  type TaskWorldDemonstrationStep,
  type TaskWorldDocument,
  type TaskWorldLevel,
  type TaskWorldSplit,
  type TaskWorldTask,
} from './task-world/types';
export { type TaskWorldFiles, writeTaskWorld } from './task-world/write-task-world';
/** The world's random planner, drawn for LoRA alone to learn the world, with a BPE tokenizer learned from its demonstrations; its Qwen3 config, and a ceiling of its vocabulary for what is sized before it exists. */
export {
  createWorldPlannerFolder,
  worldPlannerConfig,
  worldPlannerVocabCeiling,
  type WorldPlannerSample,
  type WorldPlannerShape,
} from './task-world/world-planner';
/** The world's imperfect teacher: demonstrations with a wrong lookup, operator or unchecked stale entry, answering what the mistake leads to, or with a mistake it recovers from. */
export {
  WORLD_TEACHER_RECOVERIES,
  type WorldTeacherRecovery,
  withWorldRecovery,
} from './task-world/world-recoveries';
export {
  createWorldTeacher,
  evaluateWorldCode,
  WORLD_TEACHER_MISTAKES,
  type WorldTeacherDemonstration,
  type WorldTeacherMistake,
  type WorldTeacherSettings,
  withWorldMistake,
} from './task-world/world-teacher';

// Task sources.
/** The contract every task source meets: two splits, a reward, the tools, demonstrations. */
export type {
  TaskItem,
  TaskSource,
  TaskSourceTools,
  TaskSourceToolsSettings,
  TaskSplitName,
} from './task-source/task-source';
/** Benchmark files (AIME CSV, AgentFlow JSON, a user's JSONL) as a task source. */
export { createDatasetTaskSource, type DatasetTaskSourceSettings } from './task-source/dataset-task-source';
/** The generated task world as a task source, with its corpus_search and python tools and its exact expert's or an imperfect teacher's demonstrations. */
export {
  createWorldTaskSource,
  type WorldTaskSource,
  type WorldTaskSourceSettings,
  type WorldTaskSourceTeacher,
} from './task-source/world-task-source';
/** A task source's reward as a trainer's outcome scorer (`@agentflow/dapo`'s `scoreOutcome`). */
export { createOutcomeScorer, type OutcomeScorerSettings, type TaskOutcome } from './task-source/outcome-scorer';
/** The train/test near-duplicate guard: refuse a leaking split, or drop the leaked train items. */
export {
  checkSplitLeakage,
  type SplitLeakageRecord,
  type SplitLeakageResult,
  type SplitLeakageSettings,
  splitLeakageSettingsSchema,
} from './task-source/split-leakage';
/** A run config's task block: the generated world (its bounds, planner and teacher) or benchmark files, with the leakage guard's settings. */
export {
  type DatasetFileSettings,
  datasetFileSettingsSchema,
  type DatasetsTaskSettings,
  datasetsTaskSettingsSchema,
  TASK_WORLD_BOUNDS,
  taskSourceLeakageFields,
  type TaskSourceSettings,
  taskSourceSettingsSchema,
  taskSourceSettingsSchemaWith,
  type TaskSourceSettingsWording,
  type WorldPlannerSizes,
  worldPlannerSettingsSchema,
  worldPlannerShapeIssues,
  type WorldTaskSettings,
  worldTaskSettingsSchema,
  worldTeacherSettingsSchema,
} from './task-source/task-source-settings';
/** The task source of a parsed task block, with the world's planner where it has one. */
export {
  type ConfiguredTaskSource,
  openConfiguredTaskSource,
  type OpenConfiguredTaskSourceSettings,
} from './task-source/open-configured-task-source';
/** The longest demonstration of a source's items: what an agent's step limit must allow. */
export { type LongestDemonstration, longestDemonstration } from './task-source/longest-demonstration';
/** Persistent python REPLs shared by a run's tasks when `pythonSlots` is not given (8). */
export { DEFAULT_PYTHON_SLOTS } from './task-source/pooled-python-tool';
