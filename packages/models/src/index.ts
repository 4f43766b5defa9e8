/**
 * @agentflow/models: decoder causal LMs (Qwen2/Qwen2.5, Qwen3, Llama 3.x) on @agentflow/tensor's
 * ONNX graph engine. Configs and weights from Hugging Face folders, tokenizers through @huggingface/transformers,
 * batched log-probs, KV-cached generation, JSON-schema-constrained decoding, LoRA in the PEFT
 * layout with a pluggable training objective, a scalar head, and the `TrainablePolicy` of core.
 */

/** config.json of any supported family (Qwen2/Qwen2.5, Qwen3, Llama 3.x, by model_type): parsing, bounds, validation and the reverse mapping. */
export {
  type DecoderConfig,
  decoderArchitectureOf,
  decoderHfConfigSchema,
  loadDecoderConfig,
  parseDecoderConfig,
} from './config/decoder-config';
/** The families and what differs between them (biases, q/k norm, defaults); RoPE scaling (default, linear, llama3). */
export {
  biasedModules,
  DECODER_ARCHITECTURES,
  type DecoderArchitecture,
  type DecoderArchitectureInfo,
  type DecoderLayerFeatures,
  hasQueryKeyNorm,
} from './config/decoder-architecture';
export { ropeInverseFrequencies, type RopeScaling, SUPPORTED_ROPE_TYPES } from './config/rope-scaling';
/** The first names of the config's API, from when Qwen3 was the only family: each is the decoder's, for every family. */
export { loadQwen3Config, parseQwen3Config, QWEN3_BOUNDS, qwen3HfConfigSchema, toHfConfig, type Qwen3Config } from './config/qwen3-config';
/** The shape rules of a decoder layer, every family (whole heads, even head width, grouped kv heads) as issues, for a caller's own config schema. */
export {
  DECODER_BOUNDS,
  type DecoderLayerShape,
  QWEN3_HF_SHAPE_KEYS,
  qwen3HeadDim,
  qwen3ShapeIssues,
  type Qwen3LayerShape,
  type Qwen3ShapeIssue,
  type Qwen3ShapeKeys,
} from './config/qwen3-config';
/** Built-in model shapes (`tiny`, `qwen3-0.6b-shape`, `qwen3-8b-shape`, `tiny-qwen3-vocab`; `tiny-qwen2`, `tiny-llama`, `qwen2.5-7b-shape`, `llama3.1-8b-shape`, `tiny-qwen2.5-vocab`, `tiny-llama3.1-vocab`). */
export { getModelPreset, MODEL_PRESETS, type ModelPresetName } from './config/presets';
/** Byte-level tokenizer files with a ChatML template. */
export {
  BYTE_LEVEL_SPECIAL_TOKENS,
  CHATML_TEMPLATE,
  byteLevelVocabSize,
  createByteLevelTokenizerFiles,
  type ByteLevelTokenizerSettings,
  writeTokenizerFiles,
  type TokenizerFiles,
} from './tokenizer/byte-level-tokenizer';
/** Learns byte-level BPE merges from sample texts, for small models of a narrow domain. */
export { trainByteLevelBpe, type TrainByteLevelBpeSettings } from './tokenizer/train-byte-level-bpe';
/** Offline tokenizer loading through @huggingface/transformers. */
export {
  loadTokenizer,
  type ApplyChatTemplateSettings,
  type ChatTemplateKwargs,
  type ChatTokenizer,
  type LoadTokenizerSettings,
  type ModelTokenizer,
} from './tokenizer/load-tokenizer';
/** Copies the tokenizer files of an existing Hugging Face folder (e.g. a Qwen3 checkpoint). */
export { copyTokenizerFiles, OPTIONAL_TOKENIZER_FILES, REQUIRED_TOKENIZER_FILES } from './tokenizer/copy-tokenizer-files';
/** Weight names, shapes and containers (HF naming). */
export {
  expectedWeightShapes,
  LINEAR_MODULES,
  linearPath,
  type LinearModule,
  type ModelWeights,
  type WeightTensor,
  type Float32WeightTensor,
  type HalfWeightTensor,
  float32WeightData,
  isHalfWeight,
  modelWeightDtype,
  weightDtypeOf,
} from './weights/weight-names';
/** The element type a policy's base weights are held in (`policy.dtype`): auto, float32, bfloat16, float16. */
export {
  loadPolicyModel,
  type LoadPolicyModelSettings,
  plannedWeightDtype,
  type PolicyDtype,
  policyDtypeSchema,
  resolveWeightDtype,
  type WeightDtypeChoice,
} from './policy/policy-dtype';
/** Random models with HF's initialisation. */
export { createRandomModel, type DecoderModel, type Qwen3Model, type RandomModelSettings } from './weights/random-model';
/** Reading and writing HF model folders. */
export {
  loadModel,
  saveModelFolder,
  type SaveModelFolderSettings,
  type TokenizerSource,
  type WeightDtype,
} from './weights/model-folder';
/** How saveModelFolder cuts weights into safetensors shards (transformers' max_shard_size rule). */
export { DEFAULT_MAX_SHARD_BYTES, planShards, type ShardPlan, type WeightShard } from './weights/shard-plan';
/** Checked loading of a folder's weights: paths, file kinds, shapes and sizes before any read; finite values. */
export { checkModelWeights, loadModelWeights, type LoadWeightsSettings, type WeightsPlan } from './weights/load-weights';
/** Whether a folder is a model folder that will load (files, config, weights from the headers), as a problem in words rather than a throw. */
export { checkModelFolder, type ModelFolderCheck } from './weights/check-model-folder';
/** A random model folder of a preset, with the byte-level or a copied tokenizer (`agentflow model init`). */
export { type RandomModelFolder, type RandomModelFolderSettings, writeRandomModelFolder } from './weights/random-model-folder';
/** The independent float64 reference forward pass used to check the graph. */
export { referenceCompletionLogprobs, referenceForward, type ReferenceOutput } from './reference/reference-forward';
/** Sampling helpers. */
export { findStopString, sampleToken, type SampledToken, type SamplingSettings } from './sampling/sample-token';
/** JSON-schema-constrained decoding. */
export { compileJsonSchema, type SchemaNode } from './constrained/schema-node';
export {
  createJsonSchemaConstraints,
  type ConstraintState,
  type ConstraintVocabulary,
  type TokenConstraint,
} from './constrained/token-constraint';
/** LoRA adapters: settings (and the `{ rank, alpha }` block every config uses), PEFT save/load, merge. */
export {
  cloneLoraAdapter,
  createLoraAdapter,
  loraScale,
  loraSettingsSchema,
  loraShapeSchema,
  loraShapeSchemaWithDefaults,
  type LoraAdapter,
  type LoraConfig,
  type LoraMatrices,
  type LoraSettings,
  type LoraShape,
} from './lora/lora-adapter';
export { loadLoraAdapter, mergeLoraAdapter, peftKey, saveLoraAdapter } from './lora/peft-format';
/** The base with an adapter merged in, written once as a plain model folder (atomically: beside, then renamed). */
export { type MergedModelFolderSettings, writeMergedModelFolder } from './lora/merged-model-folder';
/** A fresh PEFT adapter folder for a model folder, B zero or drawn (`agentflow model init-adapter`). */
export { type LoraAdapterFolderSettings, writeLoraAdapterFolder } from './lora/lora-adapter-folder';
/** The inference engine: log-probs and one forward step with a KV cache. */
export {
  createCausalLm,
  type CausalLm,
  type CausalLmSettings,
  type CompletionScores,
  type ForwardStepInput,
} from './engine/causal-lm';
/** The fixed-capacity KV cache a generation's steps read in place and write their new keys and values into. */
export { createKeyValueCache, type KeyValueCache } from './engine/key-value-cache';
/** Batched generation with a KV cache, sampling and constraints. */
export { DEFAULT_PREFILL_CHUNK_TOKENS, generate, type GenerateSettings, type GenerationTokenizer } from './engine/generate';
/** An ONNX Runtime session from a built graph: in memory below protobuf's 2 GB cap, through a temporary file with external data above it. */
export { createGraphSession } from './engine/session-loader';
/** Graph building blocks (for packages that build their own graphs on this model). */
export {
  type AttentionSettings,
  buildDecoder,
  DEFAULT_ATTENTION_BLOCK_SIZE,
  type DecoderSettings,
  type DecoderTensors,
  defaultAttention,
  type LoraTensors,
} from './graph/decoder-graph';
export type { RowBlockSettings } from './graph/row-blocked-layer';
export { buildInferenceGraph } from './graph/inference-graph';
export { declareLoraInputs, loraFeeds, loraInputName, loraLayoutOf, type LoraLayout } from './graph/lora-inputs';
/** A training step's LoRA gradients by PEFT key (the names of the saved adapter), not by graph input. */
export { peftGradients } from './graph/lora-inputs';
/** The training graph with a pluggable objective (an objective graph naming the kind it builds), and its runner. */
export {
  buildPolicyTrainingGraph,
  nllObjective,
  type ObjectiveMetric,
  type ObjectiveOutputs,
  type ObjectiveTensors,
  type PerTokenField,
  type PolicyObjectiveGraph,
  type PolicyTrainingGraph,
  type TrainedTensors,
  type TrainingGraphSettings,
  trainedGraphTensors,
} from './graph/policy-training-graph';
/** Predicted peak memory of a process's models and sessions (weights, adapters or full training with its reference, activations); parameters of a model and of one decoder layer. */
export {
  FULL_TRAINING_ALTERNATIVE_LORA_RANK,
  formatMemoryPlan,
  layerParameterCount,
  layerWidth,
  type MemoryPlan,
  type MemoryPlanRow,
  type MemoryPlanSettings,
  parameterCount,
  type PlannedFullTraining,
  type PlannedModel,
  type PlannedReference,
  type PlannedSession,
  planMemory,
} from './engine/memory-plan';
/** A trained policy's sessions (generation, log-probs, training step) at full length, for planMemory. */
export { type PlannedPolicySettings, plannedPolicySessions } from './engine/policy-memory-sessions';
export {
  createPolicyTrainer,
  type PolicyTrainer,
  type PolicyTrainerCommonSettings,
  type PolicyTrainerSettings,
  type TrainingStepResult,
} from './engine/training-step';
/** Completion log-probs and the mean NLL's LoRA gradients by PEFT key, from folders, for comparison with other frameworks (`agentflow model logprobs | grad`). */
export {
  type CompletionNllGradients,
  completionNllGradients,
  type CompletionNllGradientsSettings,
  scoreCompletions,
  type ScoreCompletionsSettings,
} from './engine/completion-batch-scores';
export { completionFileSchema, readCompletionFile } from './engine/completion-file';
/** Supervised fine-tuning (a warm start on demonstrations): the nll objective, batches, warm-up and cosine schedule, resumable by epoch. */
export {
  type SupervisedExample,
  supervisedFineTune,
  type SupervisedFineTuneSettings,
  supervisedLearningRate,
} from './engine/supervised-fine-tune';
/**
 * The supervised warm start with its check: checkpointed every epoch and resumable, an attempt
 * judged on its loss and held-back accuracy and redone from a new initialisation when it fails.
 */
export {
  runSupervisedWarmStart,
  type SupervisedSample,
  type SupervisedWarmStartResult,
  type SupervisedWarmStartSettings,
  type WarmStartPolicy,
} from './warm-start/supervised-warm-start';
export { checkWarmStart, heldOutSplit, type WarmStartCheck, type WarmStartVerdict } from './warm-start/warm-start-check';
/** The check as a config block (zod, with the default run's defaults; null: none). */
export { warmStartCheckSchema } from './warm-start/warm-start-check-schema';
/** core's TrainablePolicy on a local model (any supported family) with LoRA or in full. */
export { createLocalPolicy, type LocalPolicy, type LocalPolicyAdapter, type LocalPolicySettings } from './policy/local-policy';
/**
 * What a local policy trains (`LocalPolicySettings.trainable`): a LoRA adapter, or the base weights
 * (full-parameter) with `frozen` name patterns; the zod schema for a config block, the pattern
 * matching, and which weights AdamW decays (not norms or biases).
 */
export {
  decaysWeight,
  type FullTrainableSet,
  type LoraTrainableSet,
  matchesWeightPattern,
  type TrainableSet,
  trainableSetSchema,
  trainableWeightNames,
} from './policy/trainable-set';
/** A model folder opened as a trainable policy with its tokenizer: what every opened policy shares. */
export type { OpenedLoraPolicy, OpenedPolicy, PolicyOpenSettings } from './policy/opened-policy';
/** A model folder opened as a trainable LoRA policy with its tokenizer, from a fresh or a saved adapter. */
export { type LoraPolicyOpenSettings, openLoraPolicy, type OpenLoraPolicySettings } from './policy/open-lora-policy';
/** A model folder opened as a policy that trains its weights (full-parameter), from the folder or a saved checkpoint. */
export { openFullPolicy, type OpenFullPolicySettings } from './policy/open-full-policy';
/** A warm start and the training after it, each phase LoRA or full: which folder and checkpoint each phase opens, the merged warm model, the KL reference. */
export {
  createWarmStartedPolicy,
  type WarmReference,
  type WarmStartedOpenSettings,
  type WarmStartedPolicy,
  type WarmStartedPolicySettings,
} from './policy/warm-started-policy';
/** What each phase of a warm-started policy trains, and how the memory plan counts it. */
export { plannedPhaseTraining, type TrainedPhaseTraining, trainsWarmAdapterOn, type WarmPhaseTraining } from './policy/warm-started-phases';
/** The PRM's scalar regression head. */
export {
  createScalarHead,
  createScalarHeadModel,
  loadScalarHead,
  saveScalarHead,
  type ScalarHead,
  type ScalarHeadBatch,
  type ScalarHeadGradients,
  type ScalarHeadModel,
  type ScalarHeadModelSettings,
  type ScalarHeadTrainingBatch,
} from './head/scalar-head';
