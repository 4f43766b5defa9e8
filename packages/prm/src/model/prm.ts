import type { ChatMessage, StepScoringInput } from '@agentflow/core';
import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';
import {
  createLoraAdapter,
  createRandomModel,
  getModelPreset,
  type LoraAdapter,
  type LoraLayout,
  loadModel,
  loadTokenizer,
  loraLayoutOf,
  type Qwen3Model,
  trainableWeightNames,
} from '@agentflow/models';
import { createRuntime } from '@agentflow/tensor';
import type { PrmExample } from '../example/prm-example';
import { renderStepInput } from '../example/render-input';
import { createFeatureExtractor, type FeatureExtractor } from './backbone-features';
import { confidenceFeatureCount, confidenceFeatureSet, confidenceFeatures, describeStep } from './confidence-features';
import { createHeadParameters, createHeadSessions, type HeadLayout, type HeadParameters, type HeadSessions, headLayoutOf } from './head-graph';
import { type PrmConfig, type PrmSettings, prmSettingsSchema } from './prm-settings';
import { type PrmTrainingReport, type PrmTrainingSettings, prmTrainingSettingsSchema } from './prm-training-settings';
import { createPrmTrainer, type PrmBackboneTraining } from './prm-trainer';
import { runTrainingLoop } from './training-loop';

/**
 * A process reward model: a Qwen3 backbone and a sigmoid regression head on its last token
 * (and, with `confidence`, on the planner's confidence features too), linear or with one ReLU
 * layer (`headHidden`).
 */
export interface Prm {
  readonly config: PrmConfig;
  readonly model: Qwen3Model;
  /** The head, updated in place by training. */
  readonly head: HeadParameters;
  /** The LoRA adapter, updated in place by training; undefined unless `trainable` is LoRA. */
  readonly adapter: LoraAdapter | undefined;
  /**
   * The backbone weights that train with the head, by Hugging Face name, when `trainable` is full
   * (updated in place in `model.weights`); empty otherwise.
   */
  readonly trainedWeights: readonly string[];
  /** Mean label of the training set, once trained (the constant baseline of `prm eval`). */
  trainingLabelMean: number | undefined;
  /** Token ids the backbone reads for a rendered step (truncated to keep the end). */
  encode(text: string): number[];
  /** Token ids the backbone reads for a step, in the PRM's `input` format (truncated to keep the end). */
  encodeStep(input: StepScoringInput): number[];
  /** Scores in [0, 1], one per input; 0 for a null action (a format error) without running the model. */
  score(inputs: readonly StepScoringInput[]): Promise<number[]>;
  /** Fits the PRM on labelled steps (format-error steps are skipped: they score 0 by rule). */
  train(
    examples: readonly PrmExample[],
    settings?: PrmTrainingSettings & { onEpoch?: Parameters<typeof runTrainingLoop>[0]['onEpoch'] },
  ): Promise<PrmTrainingReport>;
  release(): Promise<void>;
}

interface Backbone {
  model: Qwen3Model;
  encode: (text: string) => number[];
  /** The chat template's ids for the messages, with the assistant header after them; absent without a tokenizer. */
  encodeChat?: (messages: readonly ChatMessage[]) => number[];
}

/**
 * Loads or creates the backbone's weights and tokenizer. `trainedFolder`, a backbone trained in
 * full and saved by `savePrm`, holds the weights (and, for a folder backbone, the tokenizer
 * files copied from it) in place of the configured source.
 */
async function loadBackbone(config: PrmConfig, trainedFolder?: string): Promise<Backbone> {
  const backbone = config.backbone;
  if (backbone.kind === 'random') {
    if (config.input === 'chat') {
      throw new AgentFlowError({
        code: 'INVALID_CONFIG',
        message: "PRM input 'chat' reads the planner's prompt through the backbone's chat template, but a random backbone has none: use a folder backbone (the planner) or input 'text'.",
      });
    }
    const model = trainedFolder ? await loadModel(trainedFolder) : createRandomModel(getModelPreset(backbone.preset), backbone.seed);
    // Byte-level: the tiny preset's tokenizer maps each UTF-8 byte to the id of the same value.
    return { model, encode: (text) => Array.from(Buffer.from(text, 'utf8')) };
  }
  const path = trainedFolder ?? backbone.path;
  const [model, tokenizer] = await Promise.all([loadModel(path), loadTokenizer(path, backbone.chatTemplateKwargs ? { chatTemplateKwargs: backbone.chatTemplateKwargs } : {})]);
  return { model, encode: (text) => tokenizer.encode(text), encodeChat: (messages) => tokenizer.encodeChat(messages) };
}

/**
 * The ids of a step as the planner saw and wrote it: its prompt through the chat template, then its
 * completion; with `stepResult`, the next step's prompt when there is one (this step and its result in its history).
 */
function encodeChatStep(backbone: Backbone, input: StepScoringInput & { id?: string }, stepResult: boolean): number[] {
  if (stepResult && input.nextPrompt !== undefined && backbone.encodeChat !== undefined) return backbone.encodeChat(input.nextPrompt);
  if (input.prompt === undefined || input.completion === undefined || backbone.encodeChat === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `PRM input 'chat' needs each step's prompt and completion, but step ${describeStep(input)} has ${input.prompt === undefined ? 'no prompt' : 'no completion'} (label files written before they were recorded lack them: relabel, or use input 'text').`,
    });
  }
  return [...backbone.encodeChat(input.prompt), ...backbone.encode(input.completion)];
}

/**
 * The backbone weights that train in full: those the `frozen` patterns leave (each pattern must
 * match a weight of the model), among those the PRM reads.
 */
function fullyTrainedWeights(model: Qwen3Model, frozen: readonly string[], read: readonly string[]): string[] {
  const readable = new Set(read);
  const names = trainableWeightNames(model.weights.keys(), frozen).filter((name) => readable.has(name));
  if (names.length === 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `PRM trainable full: the frozen patterns ${describeValue(frozen)} leave no weight the PRM reads to train (it reads ${describeValue(read, 200)}); freeze fewer, or use trainable kind head.`,
    });
  }
  return names;
}

/** What trains with the head, in the form a PRM holds it (the LoRA adapter; the names of the weights trained in full). */
function backboneTraining(
  trainable: PrmConfig['trainable'],
  lora: { adapter: LoraAdapter; layout: LoraLayout } | undefined,
  fullWeights: (frozen: readonly string[]) => string[],
): PrmBackboneTraining {
  switch (trainable.kind) {
    case 'head':
      return { kind: 'head' };
    case 'lora':
      if (!lora) throw new AgentFlowError({ code: 'INTERNAL', message: 'A PRM with LoRA was assembled without its adapter.' });
      return { kind: 'lora', ...lora };
    case 'full':
      return { kind: 'full', weightNames: fullWeights(trainable.frozen) };
    default:
      return assertNever(trainable, 'PRM trainable set');
  }
}

/** Internal: builds a PRM from parsed settings and optional saved state (`backboneFolder`: a backbone trained in full). */
export async function assemblePrm(
  config: PrmConfig,
  state: { head?: HeadParameters; adapter?: LoraAdapter; backboneFolder?: string; trainingLabelMean?: number } = {},
): Promise<Prm> {
  const backbone = await loadBackbone(config, state.backboneFolder);
  const { model } = backbone;
  const hiddenSize = model.config.hiddenSize;
  const runtime = createRuntime({
    device: config.device,
    ...(config.intraOpThreads === undefined ? {} : { intraOpThreads: config.intraOpThreads }),
  });
  const { trainable } = config;
  let adapter: LoraAdapter | undefined;
  if (trainable.kind === 'lora') {
    const { kind: _kind, ...lora } = trainable;
    adapter = state.adapter ?? createLoraAdapter(model.config, lora, 0);
  }
  const layout = adapter ? loraLayoutOf(model.config, adapter.config) : undefined;
  const extractor: FeatureExtractor = await createFeatureExtractor(runtime, model.config, model.weights, {
    batchSize: config.batchSize,
    ...(layout ? { lora: layout } : {}),
    // Trained in full, the weights change in place: a CUDA session must read them from the host.
    hostWeights: trainable.kind === 'full',
  });
  let training: PrmBackboneTraining;
  try {
    training = backboneTraining(trainable, adapter && layout ? { adapter, layout } : undefined, (frozen) =>
      fullyTrainedWeights(model, frozen, extractor.weightNames),
    );
  } catch (error) {
    await extractor.release();
    throw error;
  }
  const featureSet = confidenceFeatureSet(config.confidence);
  const extraFeatures = confidenceFeatureCount(config.confidence);
  const headWidth = hiddenSize + extraFeatures;
  const headLayout: HeadLayout = { inputs: headWidth, hidden: config.headHidden };
  const head: HeadParameters = state.head ?? createHeadParameters(headLayout);
  const given = headLayoutOf(head);
  if (given.inputs !== headLayout.inputs || given.hidden !== headLayout.hidden || head.weight.length !== (headLayout.hidden || headLayout.inputs)) {
    await extractor.release();
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `The PRM head reads ${given.inputs} features${given.hidden ? ` through ${given.hidden} hidden units` : ''} with ${head.weight.length} score weights, but this PRM gives it ${headWidth} (hidden size ${hiddenSize}${extraFeatures ? ` and ${extraFeatures} confidence features` : ''})${headLayout.hidden ? ` through ${headLayout.hidden} hidden units (headHidden)` : ' with no hidden layer (headHidden 0)'}.`,
    });
  }
  let heads: HeadSessions = await createHeadSessions(runtime, headLayout);
  /** The confidence features of each input, [rows, extraFeatures] row-major (empty without them). */
  const extrasOf = (inputs: readonly (StepScoringInput & { id?: string })[]) =>
    Float32Array.from(inputs.flatMap((input) => (featureSet ? confidenceFeatures(input, featureSet) : [])));
  /** The head's input rows: each row's hidden state, then its extra features. */
  const headInputs = (hidden: Float32Array, extras: Float32Array) => {
    if (!extraFeatures) return hidden;
    const rows = hidden.length / hiddenSize;
    const out = new Float32Array(rows * headWidth);
    for (let row = 0; row < rows; row++) {
      out.set(hidden.subarray(row * hiddenSize, (row + 1) * hiddenSize), row * headWidth);
      out.set(extras.subarray(row * extraFeatures, (row + 1) * extraFeatures), row * headWidth + hiddenSize);
    }
    return out;
  };
  const keepEnd = (ids: number[]) => (ids.length > config.maxTokens ? ids.slice(ids.length - config.maxTokens) : ids);
  const encode = (text: string) => keepEnd(backbone.encode(text));
  const encodeStep = (input: StepScoringInput & { id?: string }) => {
    if (config.stepResult && input.action !== null && input.result === undefined) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `PRM stepResult reads what each decision's tool returned, but step ${describeStep(input)} has no result (label files written before it was recorded lack it: relabel, or set stepResult false).`,
      });
    }
    return config.input === 'chat' ? keepEnd(encodeChatStep(backbone, input, config.stepResult)) : encode(renderStepInput(input, { stepResult: config.stepResult }));
  };

  const prm: Prm = {
    config,
    model,
    head,
    adapter,
    trainedWeights: training.kind === 'full' ? training.weightNames : [],
    trainingLabelMean: state.trainingLabelMean,
    encode,
    encodeStep,
    async score(inputs) {
      const scores = new Array<number>(inputs.length).fill(0);
      const indices = inputs.flatMap((input, index) => (input.action === null ? [] : [index]));
      if (indices.length === 0) return scores;
      const scored = indices.map((index) => inputs[index]!);
      const extras = extrasOf(scored);
      const hidden = await extractor.features(scored.map(encodeStep), adapter);
      const values = await heads.score(headInputs(hidden, extras), head);
      indices.forEach((index, row) => {
        scores[index] = values[row]!;
      });
      return scores;
    },
    async train(examples, settings = {}) {
      const { onEpoch, ...rest } = settings;
      const trainingConfig = prmTrainingSettingsSchema.parse(rest);
      const usable = examples.filter((example) => example.action !== null);
      for (const example of usable) {
        if (!(example.label >= 0 && example.label <= 1)) {
          throw new AgentFlowError({
            code: 'INVALID_ARGUMENT',
            message: `Example ${example.id} has label ${describeValue(example.label)}; labels must be in [0, 1].`,
          });
        }
      }
      const tokens = usable.map((example) => encodeStep(example));
      const extras = extrasOf(usable);
      const labels = Float32Array.from(usable, (example) => example.label);
      await heads.release();
      heads = await createHeadSessions(runtime, headLayout, trainingConfig.loss);
      const { trainer, release } = await createPrmTrainer({
        runtime,
        model,
        training,
        config: trainingConfig,
        extractor,
        heads,
        head,
        tokens,
        labels,
        extras,
        extraFeatures,
        headInputs,
      });
      try {
        const report = await runTrainingLoop({
          model: trainer,
          labels,
          trajectoryIds: usable.map((example) => example.trajectoryId),
          config: trainingConfig,
          ...(onEpoch ? { onEpoch } : {}),
        });
        prm.trainingLabelMean = report.trainingLabelMean;
        return report;
      } finally {
        await release();
      }
    },
    async release() {
      await extractor.release();
      await heads.release();
    },
  };
  return prm;
}

/**
 * Creates a PRM: a Qwen3 backbone of any size (the tiny preset with random weights by
 * default, or a Hugging Face folder) and a sigmoid regression head on the hidden state of the
 * last token, all run through ONNX Runtime. `trainable` says what trains with the head: nothing
 * (`head`, the default), a LoRA adapter (`lora`), or the backbone's weights (`full`).
 */
export async function createPrm(settings: PrmSettings = {}): Promise<Prm> {
  const parsed = prmSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid PRM settings: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
      cause: parsed.error,
    });
  }
  return assemblePrm(parsed.data);
}
