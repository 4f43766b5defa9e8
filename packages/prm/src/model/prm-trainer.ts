import { assertNever } from '@agentflow/core';
import { createGraphSession, decaysWeight, float32WeightData, type LoraAdapter, type LoraLayout, loraFeeds, loraInputName, type Qwen3Model } from '@agentflow/models';
import type { TensorRuntime, TensorSession } from '@agentflow/tensor';
import type { FeatureExtractor } from './backbone-features';
import { buildBackboneTrainingGraph } from './backbone-training-graph';
import type { HeadParameters, HeadSessions } from './head-graph';
import type { PrmTrainingConfig } from './prm-training-settings';
import { createBackboneTrainer } from './train-backbone';
import { createHeadTrainer, pickRows } from './train-head';
import type { TrainableScorer } from './training-loop';

/** What trains with the head, as a PRM holds it: nothing, its LoRA adapter, or the named base weights. */
export type PrmBackboneTraining =
  | { kind: 'head' }
  | { kind: 'lora'; adapter: LoraAdapter; layout: LoraLayout }
  | { kind: 'full'; weightNames: readonly string[] };

/** Everything one `train` call needs to build its trainer. */
export interface PrmTrainerSettings {
  runtime: TensorRuntime;
  model: Qwen3Model;
  training: PrmBackboneTraining;
  config: PrmTrainingConfig;
  extractor: FeatureExtractor;
  heads: HeadSessions;
  head: HeadParameters;
  tokens: readonly (readonly number[])[];
  labels: Float32Array;
  /** The confidence features of each row, [rows, extraFeatures] (empty without them). */
  extras: Float32Array;
  extraFeatures: number;
  /** The head's input rows: each row's hidden state, then its extra features. */
  headInputs: (hidden: Float32Array, extras: Float32Array) => Float32Array;
}

/**
 * The trainer of one `train` call: the head on features computed once (`head`), or a training
 * graph through the backbone with LoRA inputs (`lora`: `loraLearningRate`, no clipping) or with
 * the base weights differentiated (`full`: `backboneLearningRate`, `weightDecay` on matrices only,
 * the backbone's and head's gradients clipped to `maxGradNorm` together). `release` closes the
 * training session.
 */
export async function createPrmTrainer(settings: PrmTrainerSettings): Promise<{ trainer: TrainableScorer; release: () => Promise<void> }> {
  const { runtime, model, training, config, extractor, heads, head, tokens, labels, extras, extraFeatures, headInputs } = settings;
  const adapter = training.kind === 'lora' ? training.adapter : undefined;
  const inputsOf = async (indices: readonly number[]) =>
    headInputs(await extractor.features(indices.map((index) => tokens[index]!), adapter), pickRows(extras, indices, extraFeatures));
  const predict = async (indices: readonly number[]) => heads.score(await inputsOf(indices), head);
  const common = {
    parameters: head,
    tokens,
    labels,
    ...(extraFeatures ? { extra: { features: extras, width: extraFeatures } } : {}),
    learningRate: config.learningRate,
    weightDecay: config.weightDecay,
    predict,
    headInputs: inputsOf,
  };
  let session: TensorSession;
  let trainer: TrainableScorer;
  switch (training.kind) {
    case 'head':
      return {
        trainer: createHeadTrainer({
          head: heads,
          parameters: head,
          features: headInputs(await extractor.features(tokens), extras),
          labels,
          learningRate: config.learningRate,
          weightDecay: config.weightDecay,
        }),
        release: async () => undefined,
      };
    case 'lora': {
      const { layout } = training;
      const built = buildBackboneTrainingGraph(model.config, model.weights, { kind: 'lora', layout }, config.loss, extraFeatures, config.recompute, heads.layout.hidden);
      session = await createGraphSession(runtime, built.graph, 'prm-lora-train');
      const backbone: Record<string, Float32Array> = {};
      for (const { path } of layout.modules) {
        const matrices = training.adapter.matrices.get(path)!;
        backbone[loraInputName(path, 'A')] = matrices.a;
        backbone[loraInputName(path, 'B')] = matrices.b;
      }
      trainer = createBackboneTrainer({
        ...common,
        session,
        backbone,
        feeds: () => loraFeeds(layout, training.adapter),
        optimizer: { learningRate: config.loraLearningRate, weightDecay: 0, maxGradNorm: 0 },
      });
      break;
    }
    case 'full': {
      const trained = { kind: 'full' as const, weights: training.weightNames };
      const built = buildBackboneTrainingGraph(model.config, model.weights, trained, config.loss, extraFeatures, config.recompute, heads.layout.hidden);
      // hostWeights: AdamW writes the model's arrays, which a CUDA session would not see otherwise.
      session = await createGraphSession(runtime, built.graph, 'prm-full-train', { hostWeights: true });
      trainer = createBackboneTrainer({
        ...common,
        session,
        // Full training keeps float32 master weights: a half-precision backbone is refused by name.
        backbone: Object.fromEntries(training.weightNames.map((name) => [name, float32WeightData(name, model.weights.get(name)!, 'Full-parameter PRM training')])),
        feeds: () => ({}),
        optimizer: { learningRate: config.backboneLearningRate, weightDecay: config.weightDecay, decays: decaysWeight, maxGradNorm: config.maxGradNorm },
      });
      break;
    }
    default:
      return assertNever(training, 'PRM trainable set');
  }
  return { trainer, release: () => session.release() };
}
