import { AgentFlowError, describeValue } from '@agentflow/core';
import type { BlockedAttentionSettings, GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import { BLOCKED_ATTENTION, type BlockedAttentionAttributes, COMPOSITE_DOMAIN } from './blocked-attention-ops';

// Finite, so a row whose keys are all hidden (left padding) gets a uniform softmax, not NaN.
const DEFAULT_MASKED_SCORE = -1e9;

function fail(message: string, details: Record<string, unknown>): never {
  throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message, details });
}

/**
 * Scaled dot-product attention over blocks of query rows (GraphBuilder.blockedAttention): emits
 * one composite node, lowered to ONNX `Loop`s when the graph is serialised.
 */
export function blockedAttention(
  g: GraphBuilder,
  query: SymbolicTensor,
  key: SymbolicTensor,
  value: SymbolicTensor,
  settings: BlockedAttentionSettings,
): SymbolicTensor {
  const { blockSize, scale, causal, keyMask } = settings;
  const maskedScore = settings.maskedScore ?? DEFAULT_MASKED_SCORE;
  if (query.shape.length !== 5) {
    fail(
      `blockedAttention: query ${describeValue(query.name)} has shape ${describeValue(query.shape)}; expected rank 5, [batch, kvHeads, groups, sequence, headDim] (groups = heads per key/value head, 1 without grouped-query attention).`,
      { shape: query.shape },
    );
  }
  for (const [role, tensor] of [
    ['key', key],
    ['value', value],
  ] as const) {
    if (tensor.shape.length !== 4) {
      fail(`blockedAttention: ${role} ${describeValue(tensor.name)} has shape ${describeValue(tensor.shape)}; expected rank 4, [batch, kvHeads, total, headDim].`, {
        shape: tensor.shape,
      });
    }
    if (tensor.dtype !== query.dtype) {
      fail(`blockedAttention: ${role} is ${tensor.dtype} but query is ${query.dtype}; cast them to one dtype.`, { dtype: tensor.dtype });
    }
  }
  if (query.dtype !== 'float32') {
    // The blocks' products are ONNX Runtime's FusedMatMul, a float32 kernel on the CPU.
    fail(`blockedAttention: query ${describeValue(query.name)} is ${query.dtype}; expected float32 (cast it first).`, { dtype: query.dtype });
  }
  const headDim = query.shape[4];
  if (typeof headDim !== 'number' || key.shape[3] !== headDim) {
    fail(
      `blockedAttention: the head size must be a known number shared by query and key; got ${describeValue(query.shape)} and ${describeValue(key.shape)}.`,
      { query: query.shape, key: key.shape },
    );
  }
  if (!Number.isInteger(blockSize) || blockSize < 1) {
    fail(`blockedAttention: blockSize must be a positive integer (query rows per block), got ${describeValue(blockSize)}.`, { blockSize });
  }
  if (!Number.isFinite(scale) || !Number.isFinite(maskedScore)) {
    fail(`blockedAttention: scale and maskedScore must be finite numbers, got ${describeValue(scale)} and ${describeValue(maskedScore)}.`, {
      scale,
      maskedScore,
    });
  }
  if (keyMask !== undefined && (keyMask.shape.length !== 2 || !['int64', 'int32', 'bool'].includes(keyMask.dtype))) {
    fail(`blockedAttention: keyMask ${describeValue(keyMask.name)} is ${keyMask.dtype} ${describeValue(keyMask.shape)}; expected int64, int32 or bool [batch, total].`, {
      shape: keyMask.shape,
      dtype: keyMask.dtype,
    });
  }
  const attributes: BlockedAttentionAttributes = {
    block_size: blockSize,
    scale: { float: scale },
    causal: causal ? 1 : 0,
    masked_score: { float: maskedScore },
  };
  const [output] = g.op(BLOCKED_ATTENTION, [query, key, value, keyMask], {
    domain: COMPOSITE_DOMAIN,
    attributes: { ...attributes },
    outputs: [
      { dtype: query.dtype, shape: query.shape }, // [batch, kvHeads, groups, sequence, headDim]
      { dtype: query.dtype, shape: query.shape.slice(0, 4) }, // each row's largest score, for the backward
      { dtype: query.dtype, shape: query.shape.slice(0, 4) }, // each row's log sum(exp(score - largest)), for the backward
    ],
  });
  return output!;
}
