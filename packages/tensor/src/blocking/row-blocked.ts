import { AgentFlowError, describeValue } from '@agentflow/core';
import { COMPOSITE_DOMAIN } from '../attention/blocked-attention-ops';
import type { GraphBuilder, RowBlockedSettings, SymbolicTensor } from '../graph/graph-types';
import { ROW_BLOCKED, type RowBlockedMeta, type RowFunction } from './row-blocked-ops';

function fail(message: string, details: Record<string, unknown>): never {
  throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message, details });
}

/**
 * `rowFunction` over blocks of rows (GraphBuilder.rowBlocked): emits one composite node, lowered
 * to an ONNX `Loop` when the graph is serialised. `scratch` is a builder whose nodes are thrown
 * away: the function is built there once to learn its outputs' types.
 */
export function rowBlocked(
  g: GraphBuilder,
  scratch: GraphBuilder,
  rows: readonly SymbolicTensor[],
  parameters: readonly SymbolicTensor[],
  rowFunction: RowFunction,
  settings: RowBlockedSettings,
): SymbolicTensor[] {
  const { blockSize } = settings;
  if (!Number.isInteger(blockSize) || blockSize < 1) {
    fail(`rowBlocked: blockSize must be a positive integer (rows per block), got ${describeValue(blockSize)}.`, { blockSize });
  }
  if (rows.length === 0) fail('rowBlocked: give at least one row input (rows are its axis 1).', {});
  for (const row of rows) {
    if (row.shape.length < 2) {
      fail(`rowBlocked: row input ${describeValue(row.name)} has shape ${describeValue(row.shape)}; expected rank 2 or more, rows on axis 1.`, { shape: row.shape });
    }
  }
  const blockInputs = rows.map((row, index) => scratch.input(`row_${index}`, row.dtype, [row.shape[0]!, '?rows', ...row.shape.slice(2)]));
  const results = rowFunction(scratch, blockInputs, [...parameters]);
  if (results.length === 0) fail('rowBlocked: the row function returned no tensor.', {});
  for (const result of results) {
    if (result.shape.length < 2) {
      fail(`rowBlocked: the row function returned ${describeValue(result.name)} of shape ${describeValue(result.shape)}; every output needs rows on axis 1.`, {
        shape: result.shape,
      });
    }
  }
  const meta: RowBlockedMeta = { rowFunction };
  return g.op(ROW_BLOCKED, [...rows, ...parameters], {
    domain: COMPOSITE_DOMAIN,
    attributes: { block_size: blockSize, row_inputs: rows.length },
    meta: { ...meta },
    outputs: results.map((result) => ({ dtype: result.dtype, shape: [rows[0]!.shape[0]!, rows[0]!.shape[1]!, ...result.shape.slice(2)] })),
  });
}
