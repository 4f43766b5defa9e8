import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';

/**
 * Names and facts shared by the row-blocked composite (row-blocked.ts), its gradient rule and its
 * lowering to ONNX `Loop`s. Like blocked attention's, a composite of the builder's own domain:
 * autodiff and recomputation see one node; serialisation replaces it by a Loop.
 */

/**
 * Forward: inputs [...rows, ...parameters], outputs the function's. Attributes: `block_size`,
 * `row_inputs` (how many inputs are rows). The function itself is in the node's meta.
 */
export const ROW_BLOCKED = 'RowBlocked';
/**
 * Backward: inputs [...rows, ...parameters, ...outputGradients], one output per input whose
 * gradient is needed (meta `needs`, in input order).
 */
export const ROW_BLOCKED_GRADIENT = 'RowBlockedGrad';

/**
 * A function applied to rows independently: `rows` are blocks of the row inputs (axis 1 cut to
 * at most the block size), `parameters` the tensors every block reads whole (weights, LoRA
 * matrices). It returns tensors whose axis 1 is the rows' axis 1. It must give finite values on
 * rows of zeros (the last block is padded with them) and hold no composite.
 */
export type RowFunction = (body: GraphBuilder, rows: SymbolicTensor[], parameters: SymbolicTensor[]) => SymbolicTensor[];

/** What the composites keep in their node's meta (never serialised). */
export interface RowBlockedMeta {
  rowFunction: RowFunction;
  /** Backward only: per forward input, whether its gradient is an output. */
  needs?: boolean[];
}
