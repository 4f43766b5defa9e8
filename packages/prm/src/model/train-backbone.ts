import { type AdamW, clipGradientsByGlobalNorm, createAdamW, type HostTensor, type TensorSession } from '@agentflow/tensor';
import { CONFIDENCE, paddedFeeds } from './backbone-features';
import { HEAD_BIAS, HEAD_WEIGHT, type HeadParameters, LABELS, LOSS } from './head-graph';
import { pickRows, resetHead } from './train-head';
import type { TrainableScorer } from './training-loop';

/** How the backbone's trained arrays take their AdamW step (the head has its own optimiser). */
export interface BackboneOptimizerSettings {
  learningRate: number;
  weightDecay: number;
  /** Whether weight decay applies to an array, by name; default every one. */
  decays?: (name: string) => boolean;
  /** Clip the backbone's and the head's gradients together to this global L2 norm first; 0: no clipping. */
  maxGradNorm: number;
}

/**
 * The backbone's trained arrays (LoRA matrices, or base weights trained in full) and the head
 * trained together, one forward and backward pass of the training graph per step. Two AdamW
 * optimisers over one gradient: the head at `learningRate`, the backbone at its own rate (it
 * needs far smaller steps than a linear head); with `maxGradNorm`, the gradients of both are
 * clipped to one global norm before either steps. AdamW updates the arrays in place, so every
 * session that reads them (the feature extractor, this one) sees the update on its next run.
 */
export function createBackboneTrainer(settings: {
  session: TensorSession;
  /** The backbone's trained arrays by gradient name (`grad.<name>` is the graph's output); live arrays. */
  backbone: Record<string, Float32Array>;
  /** Feeds each step adds (the LoRA matrices as graph inputs; none in full). */
  feeds: () => Record<string, HostTensor>;
  parameters: HeadParameters;
  tokens: readonly (readonly number[])[];
  labels: Float32Array;
  hiddenSize: number;
  /** Extra head inputs per row ([rows, extraFeatures] row-major), after the hidden state. */
  extra?: { features: Float32Array; width: number };
  learningRate: number;
  weightDecay: number;
  optimizer: BackboneOptimizerSettings;
  predict: (indices: readonly number[]) => Promise<ArrayLike<number>>;
}): TrainableScorer {
  const { session, backbone, parameters, tokens, labels, hiddenSize, extra } = settings;
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
  const backboneOptimizer: AdamW = createAdamW({
    schedule: { kind: 'constant', learningRate: settings.optimizer.learningRate },
    weightDecay: settings.optimizer.weightDecay,
    ...(settings.optimizer.decays ? { decays: settings.optimizer.decays } : {}),
  });
  const names = Object.keys(backbone);
  return {
    reset: (labelMean) => resetHead(parameters, labelMean),
    async step(batch) {
      const out = await session.run(
        {
          ...paddedFeeds(batch.map((index) => tokens[index]!)),
          ...settings.feeds(),
          ...extraFeeds(batch),
          [HEAD_WEIGHT]: { dtype: 'float32', shape: [headWidth, 1], data: parameters.weight },
          [HEAD_BIAS]: { dtype: 'float32', shape: [1], data: parameters.bias },
          [LABELS]: { dtype: 'float32', shape: [batch.length], data: Float32Array.from(batch, (index) => labels[index]!) },
        },
        [LOSS, `grad.${HEAD_WEIGHT}`, `grad.${HEAD_BIAS}`, ...names.map((name) => `grad.${name}`)],
      );
      const gradient = (name: string) => out[`grad.${name}`]!.data as Float32Array;
      const head = { [HEAD_WEIGHT]: gradient(HEAD_WEIGHT), [HEAD_BIAS]: gradient(HEAD_BIAS) };
      const backboneGradients = Object.fromEntries(names.map((name) => [name, gradient(name)]));
      // One global norm over everything that trains (the head's names cannot be weight names).
      if (settings.optimizer.maxGradNorm > 0) clipGradientsByGlobalNorm({ ...head, ...backboneGradients }, settings.optimizer.maxGradNorm);
      headOptimizer.step({ [HEAD_WEIGHT]: parameters.weight, [HEAD_BIAS]: parameters.bias }, head);
      backboneOptimizer.step(backbone, backboneGradients);
      return Number(out[LOSS]!.data[0]);
    },
    predict: settings.predict,
    snapshot() {
      // A copy of every trained array: the size of the backbone when it trains in full.
      const saved = Object.fromEntries(Object.entries(backbone).map(([name, values]) => [name, values.slice()]));
      const weight = parameters.weight.slice();
      const bias = parameters.bias.slice();
      return () => {
        for (const [name, values] of Object.entries(saved)) backbone[name]!.set(values);
        parameters.weight.set(weight);
        parameters.bias.set(bias);
      };
    },
  };
}
