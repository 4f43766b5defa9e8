import { assertNever } from '@agentflow/core';
import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';

/** Every {@link PrmLoss}. */
export const PRM_LOSSES = ['mse', 'bce'] as const;

/**
 * The loss the PRM is trained with, on its sigmoid score p and the step label y in [0, 1],
 * averaged over rows:
 *   'mse': (p - y)^2
 *   'bce': -(y log p + (1 - y) log(1 - p)), with p clipped to [PROBABILITY_FLOOR, 1 - PROBABILITY_FLOOR]
 * {@link prmLossGraph} builds it as graph nodes (the head's and the LoRA training graphs, whose
 * autodiff gives the gradients); {@link meanPrmLoss} computes it in float64 (validation, and
 * the reference the graph is tested against).
 */
export type PrmLoss = (typeof PRM_LOSSES)[number];

// Keeps log(p) finite in the cross-entropy when the sigmoid saturates in float32.
const PROBABILITY_FLOOR = 1e-7;

/** The mean {@link PrmLoss} of `scores` [batch] against `labels` [batch], as a scalar graph tensor []. */
export function prmLossGraph(graph: GraphBuilder, scores: SymbolicTensor, labels: SymbolicTensor, loss: PrmLoss): SymbolicTensor {
  let perRow: SymbolicTensor; // [batch]
  switch (loss) {
    case 'mse': {
      const error = graph.sub(scores, labels);
      perRow = graph.mul(error, error);
      break;
    }
    case 'bce': {
      const p = graph.clip(scores, PROBABILITY_FLOOR, 1 - PROBABILITY_FLOOR);
      const positive = graph.mul(labels, graph.log(p));
      const negative = graph.mul(graph.sub(1, labels), graph.log(graph.sub(1, p)));
      perRow = graph.neg(graph.add(positive, negative));
      break;
    }
    default:
      return assertNever(loss, 'PRM loss');
  }
  return graph.reduceMean(perRow, [0]); // []
}

/** The mean {@link PrmLoss} of `scores` against `labels`, in float64. */
export function meanPrmLoss(loss: PrmLoss, scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  let total = 0;
  for (let i = 0; i < labels.length; i++) {
    const score = scores[i] as number;
    const y = labels[i] as number;
    switch (loss) {
      case 'mse':
        total += (score - y) ** 2;
        break;
      case 'bce': {
        const p = Math.min(Math.max(score, PROBABILITY_FLOOR), 1 - PROBABILITY_FLOOR);
        total += -(y * Math.log(p) + (1 - y) * Math.log(1 - p));
        break;
      }
      default:
        return assertNever(loss, 'PRM loss');
    }
  }
  return total / labels.length;
}
