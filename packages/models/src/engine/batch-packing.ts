import { AgentFlowError, type PolicyBatch } from '@agentflow/core';
import type { HostTensor } from '@agentflow/tensor';

/** A scoring batch laid out for the graph: rows = prompt ++ completion, right-padded. */
export interface PackedScoringBatch {
  batch: number;
  length: number;
  inputIds: HostTensor<'int64'>; // [batch, length]
  attentionMask: HostTensor<'int64'>; // [batch, length]
  positionIds: HostTensor<'int64'>; // [batch, length]
  targetIds: HostTensor<'int64'>; // [batch, length]: input_ids shifted left by one
  /** Row i's completion token k is predicted at position promptLengths[i] - 1 + k. */
  promptLengths: number[];
  completionLengths: number[];
}

function checkIds(ids: readonly number[], vocabSize: number, what: string): void {
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `${what} holds token id ${id}, outside the model's vocabulary [0, ${vocabSize}).`,
        details: { id, vocabSize },
      });
    }
  }
}

/** Packs prompts and completions for one scoring run. Padding never changes a row's results. */
export function packScoringBatch(batch: PolicyBatch, vocabSize: number, padTokenId = 0): PackedScoringBatch {
  if (batch.promptIds.length !== batch.completionIds.length) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `promptIds has ${batch.promptIds.length} rows but completionIds has ${batch.completionIds.length}.`,
    });
  }
  const rows = batch.promptIds.length;
  batch.promptIds.forEach((prompt, row) => {
    if (prompt.length === 0) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `Prompt ${row} is empty; every prompt needs at least one token.` });
    }
    checkIds(prompt, vocabSize, `Prompt ${row}`);
    checkIds(batch.completionIds[row]!, vocabSize, `Completion ${row}`);
  });
  const length = Math.max(1, ...batch.promptIds.map((prompt, row) => prompt.length + batch.completionIds[row]!.length));
  const inputIds = new BigInt64Array(rows * length).fill(BigInt(padTokenId));
  const attentionMask = new BigInt64Array(rows * length);
  const positionIds = new BigInt64Array(rows * length);
  const targetIds = new BigInt64Array(rows * length);
  for (let row = 0; row < rows; row++) {
    const ids = [...batch.promptIds[row]!, ...batch.completionIds[row]!];
    for (let position = 0; position < length; position++) {
      const offset = row * length + position;
      positionIds[offset] = BigInt(position);
      if (position < ids.length) {
        inputIds[offset] = BigInt(ids[position]!);
        attentionMask[offset] = 1n;
      }
      if (position + 1 < ids.length) targetIds[offset] = BigInt(ids[position + 1]!);
    }
  }
  const shape = [rows, length];
  return {
    batch: rows,
    length,
    inputIds: { dtype: 'int64', shape, data: inputIds },
    attentionMask: { dtype: 'int64', shape, data: attentionMask },
    positionIds: { dtype: 'int64', shape, data: positionIds },
    targetIds: { dtype: 'int64', shape, data: targetIds },
    promptLengths: batch.promptIds.map((prompt) => prompt.length),
    completionLengths: batch.completionIds.map((completion) => completion.length),
  };
}

/** Where each completion token is predicted, right-padded to the longest completion (at least one column). */
export interface CompletionPositions {
  width: number;
  positions: HostTensor<'int64'>; // [batch, width]: promptLengths[row] - 1 + k, 0 on padding
  mask: HostTensor<'float32'>; // [batch, width]: 1 on real completion tokens
}

export function completionPositions(packed: PackedScoringBatch): CompletionPositions {
  const width = Math.max(1, ...packed.completionLengths);
  const positions = new BigInt64Array(packed.batch * width);
  const mask = new Float32Array(packed.batch * width);
  packed.completionLengths.forEach((length, row) => {
    for (let k = 0; k < length; k++) {
      positions[row * width + k] = BigInt(packed.promptLengths[row]! - 1 + k);
      mask[row * width + k] = 1;
    }
  });
  const shape = [packed.batch, width];
  return { width, positions: { dtype: 'int64', shape, data: positions }, mask: { dtype: 'float32', shape, data: mask } };
}

/** Each row's completion values out of a [batch, width] output at {@link completionPositions}. */
export function unpackCompletionValues(packed: PackedScoringBatch, values: Float32Array, width: number): number[][] {
  return packed.completionLengths.map((length, row) => Array.from(values.subarray(row * width, row * width + length)));
}

/** Prompts left-padded for batched generation; positions count real tokens only. */
export interface PackedPromptBatch {
  batch: number;
  length: number;
  inputIds: HostTensor<'int64'>;
  attentionMask: HostTensor<'int64'>;
  positionIds: HostTensor<'int64'>;
  /** Position id the next generated token of each row gets. */
  nextPositions: number[];
}

export function packPromptBatch(prompts: readonly (readonly number[])[], vocabSize: number, padTokenId = 0): PackedPromptBatch {
  prompts.forEach((prompt, row) => {
    if (prompt.length === 0) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `Prompt ${row} is empty; generation needs at least one prompt token.` });
    }
    checkIds(prompt, vocabSize, `Prompt ${row}`);
  });
  const rows = prompts.length;
  const length = Math.max(...prompts.map((prompt) => prompt.length));
  const inputIds = new BigInt64Array(rows * length).fill(BigInt(padTokenId));
  const attentionMask = new BigInt64Array(rows * length);
  const positionIds = new BigInt64Array(rows * length);
  prompts.forEach((prompt, row) => {
    const padding = length - prompt.length;
    prompt.forEach((id, index) => {
      const offset = row * length + padding + index;
      inputIds[offset] = BigInt(id);
      attentionMask[offset] = 1n;
      positionIds[offset] = BigInt(index);
    });
  });
  const shape = [rows, length];
  return {
    batch: rows,
    length,
    inputIds: { dtype: 'int64', shape, data: inputIds },
    attentionMask: { dtype: 'int64', shape, data: attentionMask },
    positionIds: { dtype: 'int64', shape, data: positionIds },
    nextPositions: prompts.map((prompt) => prompt.length),
  };
}
