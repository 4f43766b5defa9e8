import type { ChatMessage, StepScoringInput } from '@agentflow/core';
import { AgentFlowError, describeValue } from '@agentflow/core';
import {
  createGraphSession,
  createLoraAdapter,
  createRandomModel,
  getModelPreset,
  type LoraAdapter,
  loadModel,
  loadTokenizer,
  loraLayoutOf,
  type Qwen3Model,
} from '@agentflow/models';
import { createRuntime, type TensorSession } from '@agentflow/tensor';
import type { PrmExample } from '../example/prm-example';
import { renderStepInput } from '../example/render-input';
import { createFeatureExtractor, type FeatureExtractor } from './backbone-features';
import { CONFIDENCE_FEATURE_COUNT, confidenceFeatures, describeStep } from './confidence-features';
import { createHeadSessions, type HeadParameters, type HeadSessions } from './head-graph';
import { type PrmConfig, type PrmSettings, prmSettingsSchema } from './prm-settings';
import { type PrmTrainingReport, type PrmTrainingSettings, prmTrainingSettingsSchema } from './prm-training-settings';
import { buildLoraTrainingGraph } from './lora-training-graph';
import { createHeadTrainer, pickRows } from './train-head';
import { createLoraTrainer } from './train-lora';
import { runTrainingLoop, type TrainableScorer } from './training-loop';

/**
 * A process reward model: a Qwen3 backbone and a sigmoid regression head on its last token
 * (and, with `confidence`, on the planner's confidence features too).
 */
export interface Prm {
  readonly config: PrmConfig;
  readonly model: Qwen3Model;
  /** The head, updated in place by training. */
  readonly head: HeadParameters;
  readonly adapter: LoraAdapter | undefined;
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

/** Loads or creates the backbone's weights and tokenizer. */
async function loadBackbone(config: PrmConfig): Promise<Backbone> {
  const backbone = config.backbone;
  if (backbone.kind === 'random') {
    if (config.input === 'chat') {
      throw new AgentFlowError({
        code: 'INVALID_CONFIG',
        message: "PRM input 'chat' reads the planner's prompt through the backbone's chat template, but a random backbone has none: use a folder backbone (the planner) or input 'text'.",
      });
    }
    const model = createRandomModel(getModelPreset(backbone.preset), backbone.seed);
    // Byte-level: the tiny preset's tokenizer maps each UTF-8 byte to the id of the same value.
    return { model, encode: (text) => Array.from(Buffer.from(text, 'utf8')) };
  }
  const [model, tokenizer] = await Promise.all([loadModel(backbone.path), loadTokenizer(backbone.path, backbone.chatTemplateKwargs ? { chatTemplateKwargs: backbone.chatTemplateKwargs } : {})]);
  return { model, encode: (text) => tokenizer.encode(text), encodeChat: (messages) => tokenizer.encodeChat(messages) };
}

/** The ids of a step as the planner saw and wrote it: its prompt through the chat template, then its completion. */
function encodeChatStep(backbone: Backbone, input: StepScoringInput & { id?: string }): number[] {
  if (input.prompt === undefined || input.completion === undefined || backbone.encodeChat === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `PRM input 'chat' needs each step's prompt and completion, but step ${describeStep(input)} has ${input.prompt === undefined ? 'no prompt' : 'no completion'} (label files written before they were recorded lack them: relabel, or use input 'text').`,
    });
  }
  return [...backbone.encodeChat(input.prompt), ...backbone.encode(input.completion)];
}

/** Internal: builds a PRM from parsed settings and optional saved state. */
export async function assemblePrm(
  config: PrmConfig,
  state: { head?: HeadParameters; adapter?: LoraAdapter; trainingLabelMean?: number } = {},
): Promise<Prm> {
  const backbone = await loadBackbone(config);
  const { model } = backbone;
  const hiddenSize = model.config.hiddenSize;
  const runtime = createRuntime({
    device: config.device,
    ...(config.intraOpThreads === undefined ? {} : { intraOpThreads: config.intraOpThreads }),
  });
  const adapter = config.lora ? (state.adapter ?? createLoraAdapter(model.config, config.lora, 0)) : undefined;
  const layout = adapter ? loraLayoutOf(model.config, adapter.config) : undefined;
  const extractor: FeatureExtractor = await createFeatureExtractor(runtime, model.config, model.weights, {
    batchSize: config.batchSize,
    ...(layout ? { lora: layout } : {}),
  });
  const extraFeatures = config.confidence ? CONFIDENCE_FEATURE_COUNT : 0;
  const headWidth = hiddenSize + extraFeatures;
  let heads: HeadSessions = await createHeadSessions(runtime, headWidth);
  const head: HeadParameters = state.head ?? { weight: new Float32Array(headWidth), bias: new Float32Array(1) };
  if (head.weight.length !== headWidth) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `The PRM head has ${head.weight.length} weights but reads ${headWidth} features (hidden size ${hiddenSize}${extraFeatures ? ` and ${extraFeatures} confidence features` : ''}).`,
    });
  }
  /** The confidence features of each input, [rows, extraFeatures] row-major (empty without them). */
  const extrasOf = (inputs: readonly (StepScoringInput & { id?: string })[]) =>
    Float32Array.from(inputs.flatMap((input) => (extraFeatures ? confidenceFeatures(input) : [])));
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
  const encodeStep = (input: StepScoringInput & { id?: string }) =>
    config.input === 'chat' ? keepEnd(encodeChatStep(backbone, input)) : encode(renderStepInput(input));

  const prm: Prm = {
    config,
    model,
    head,
    adapter,
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
      const training = prmTrainingSettingsSchema.parse(rest);
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
      heads = await createHeadSessions(runtime, headWidth, training.loss);
      let trainer: TrainableScorer;
      let loraSession: TensorSession | undefined;
      if (adapter && layout) {
        loraSession = await createGraphSession(
          runtime,
          buildLoraTrainingGraph(model.config, model.weights, layout, training.loss, extraFeatures, training.recompute),
          'prm-lora-train',
        );
        trainer = createLoraTrainer({
          session: loraSession,
          layout,
          adapter,
          parameters: head,
          tokens,
          labels,
          hiddenSize,
          ...(extraFeatures ? { extra: { features: extras, width: extraFeatures } } : {}),
          learningRate: training.learningRate,
          loraLearningRate: training.loraLearningRate,
          weightDecay: training.weightDecay,
          predict: async (indices) =>
            heads.score(
              headInputs(
                await extractor.features(indices.map((index) => tokens[index]!), adapter),
                pickRows(extras, indices, extraFeatures),
              ),
              head,
            ),
        });
      } else {
        trainer = createHeadTrainer({
          head: heads,
          parameters: head,
          features: headInputs(await extractor.features(tokens), extras),
          labels,
          learningRate: training.learningRate,
          weightDecay: training.weightDecay,
        });
      }
      const report = await runTrainingLoop({
        model: trainer,
        labels,
        trajectoryIds: usable.map((example) => example.trajectoryId),
        config: training,
        ...(onEpoch ? { onEpoch } : {}),
      });
      await loraSession?.release();
      prm.trainingLabelMean = report.trainingLabelMean;
      return report;
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
 * default, or a Hugging Face folder), optionally with LoRA, and a sigmoid regression head
 * on the hidden state of the last token, all run through ONNX Runtime.
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
