import { type AdamW, clipGradientsByGlobalNorm, createAdamW, type HostTensor, type TensorSession } from '@agentflow/tensor';
import { CONFIDENCE, paddedFeeds } from './backbone-features';
import { type HeadParameters, headArrays, headDecays, headFeeds, headLayoutOf, inputStatistics, LABELS, LOSS, resetHead } from './head-graph';
import { pickRows, snapshotArrays } from './train-head';
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
  /** Extra head inputs per row ([rows, extraFeatures] row-major), after the hidden state. */
  extra?: { features: Float32Array; width: number };
  learningRate: number;
  weightDecay: number;
  optimizer: BackboneOptimizerSettings;
  predict: (indices: readonly number[]) => Promise<ArrayLike<number>>;
  /** The head's input rows of `indices` as the backbone gives them now (a hidden layer's standardisation comes from them). */
  headInputs: (indices: readonly number[]) => Promise<Float32Array>;
}): TrainableScorer {
  const { session, backbone, parameters, tokens, labels, extra } = settings;
  const extraFeeds = (batch: readonly number[]): Record<string, HostTensor> => {
    if (!extra) return {};
    const rows = pickRows(extra.features, batch, extra.width);
    return { [CONFIDENCE]: { dtype: 'float32', shape: [batch.length, extra.width], data: rows } };
  };
  const headOptimizer = createAdamW({
    schedule: { kind: 'constant', learningRate: settings.learningRate },
    weightDecay: settings.weightDecay,
    decays: headDecays,
  });
  const backboneOptimizer: AdamW = createAdamW({
    schedule: { kind: 'constant', learningRate: settings.optimizer.learningRate },
    weightDecay: settings.optimizer.weightDecay,
    ...(settings.optimizer.decays ? { decays: settings.optimizer.decays } : {}),
  });
  const names = Object.keys(backbone);
  const head = headArrays(parameters);
  const headNames = Object.keys(head);
  return {
    async reset(labelMean, random, train) {
      const layout = headLayoutOf(parameters);
      const statistics = layout.hidden > 0 ? inputStatistics(await settings.headInputs(train), layout.inputs) : undefined;
      resetHead(parameters, labelMean, random, statistics);
    },
    async step(batch) {
      const out = await session.run(
        {
          ...paddedFeeds(batch.map((index) => tokens[index]!)),
          ...settings.feeds(),
          ...extraFeeds(batch),
          ...headFeeds(parameters),
          [LABELS]: { dtype: 'float32', shape: [batch.length], data: Float32Array.from(batch, (index) => labels[index]!) },
        },
        [LOSS, ...[...headNames, ...names].map((name) => `grad.${name}`)],
      );
      const gradient = (name: string) => out[`grad.${name}`]!.data as Float32Array;
      const headGradients = Object.fromEntries(headNames.map((name) => [name, gradient(name)]));
      const backboneGradients = Object.fromEntries(names.map((name) => [name, gradient(name)]));
      // One global norm over everything that trains (the head's names cannot be weight names).
      if (settings.optimizer.maxGradNorm > 0) clipGradientsByGlobalNorm({ ...headGradients, ...backboneGradients }, settings.optimizer.maxGradNorm);
      headOptimizer.step(head, headGradients);
      backboneOptimizer.step(backbone, backboneGradients);
      return Number(out[LOSS]!.data[0]);
    },
    predict: settings.predict,
    snapshot() {
      // A copy of every trained array: the size of the backbone when it trains in full.
      const restoreBackbone = snapshotArrays(backbone);
      const restoreHead = snapshotArrays(head);
      return () => {
        restoreBackbone();
        restoreHead();
      };
    },
  };
}
