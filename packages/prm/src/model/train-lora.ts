import { type LoraAdapter, type LoraLayout, loraFeeds, loraInputName } from '@agentflow/models';
import { createAdamW, type HostTensor, type TensorSession } from '@agentflow/tensor';
import { CONFIDENCE, paddedFeeds } from './backbone-features';
import { HEAD_BIAS, HEAD_WEIGHT, type HeadParameters, LABELS, LOSS } from './head-graph';
import { loraTrainableNames } from './lora-training-graph';
import { pickRows, resetHead } from './train-head';
import type { TrainableScorer } from './training-loop';

/**
 * LoRA on the backbone and the head trained together, one full forward and backward pass
 * per step. Two AdamW optimisers: the head at `learningRate`, the adapters at
 * `loraLearningRate` (adapters need far smaller steps than a linear head).
 */
export function createLoraTrainer(settings: {
  session: TensorSession;
  layout: LoraLayout;
  adapter: LoraAdapter;
  parameters: HeadParameters;
  tokens: readonly (readonly number[])[];
  labels: Float32Array;
  hiddenSize: number;
  /** Extra head inputs per row ([rows, extraFeatures] row-major), after the hidden state. */
  extra?: { features: Float32Array; width: number };
  learningRate: number;
  loraLearningRate: number;
  weightDecay: number;
  predict: (indices: readonly number[]) => Promise<ArrayLike<number>>;
}): TrainableScorer {
  const { session, layout, adapter, parameters, tokens, labels, hiddenSize, extra } = settings;
  const headWidth = hiddenSize + (extra?.width ?? 0);
  const extraFeeds = (batch: readonly number[]): Record<string, HostTensor> => {
    if (!extra) return {};
    const rows = pickRows(extra.features, batch, extra.width);
    return { [CONFIDENCE]: { dtype: 'float32', shape: [batch.length, extra.width], data: rows } };
  };
  const headOptimizer = createAdamW({
    schedule: { kind: 'constant', learningRate: settings.learningRate },
    weightDecay: settings.weightDecay,
    decays: (name) => name === HEAD_WEIGHT,
  });
  const loraOptimizer = createAdamW({ schedule: { kind: 'constant', learningRate: settings.loraLearningRate }, weightDecay: 0 });
  const loraParameters: Record<string, Float32Array> = {};
  for (const { path } of layout.modules) {
    const matrices = adapter.matrices.get(path)!;
    loraParameters[loraInputName(path, 'A')] = matrices.a;
    loraParameters[loraInputName(path, 'B')] = matrices.b;
  }
  const names = loraTrainableNames(layout);
  return {
    reset: (labelMean) => resetHead(parameters, labelMean),
    async step(batch) {
      const out = await session.run(
        {
          ...paddedFeeds(batch.map((index) => tokens[index]!)),
          ...loraFeeds(layout, adapter),
          ...extraFeeds(batch),
          [HEAD_WEIGHT]: { dtype: 'float32', shape: [headWidth, 1], data: parameters.weight },
          [HEAD_BIAS]: { dtype: 'float32', shape: [1], data: parameters.bias },
          [LABELS]: { dtype: 'float32', shape: [batch.length], data: Float32Array.from(batch, (index) => labels[index]!) },
        },
        [LOSS, ...names.map((name) => `grad.${name}`)],
      );
      const gradient = (name: string) => out[`grad.${name}`]!.data as Float32Array;
      headOptimizer.step(
        { [HEAD_WEIGHT]: parameters.weight, [HEAD_BIAS]: parameters.bias },
        { [HEAD_WEIGHT]: gradient(HEAD_WEIGHT), [HEAD_BIAS]: gradient(HEAD_BIAS) },
      );
      loraOptimizer.step(loraParameters, Object.fromEntries(Object.keys(loraParameters).map((name) => [name, gradient(name)])));
      return Number(out[LOSS]!.data[0]);
    },
    predict: settings.predict,
    snapshot() {
      const saved = Object.fromEntries(Object.entries(loraParameters).map(([name, values]) => [name, values.slice()]));
      const weight = parameters.weight.slice();
      const bias = parameters.bias.slice();
      return () => {
        for (const [name, values] of Object.entries(saved)) loraParameters[name]!.set(values);
        parameters.weight.set(weight);
        parameters.bias.set(bias);
      };
    },
  };
}
