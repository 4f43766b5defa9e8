import { AgentFlowError } from '@agentflow/core';
import type { HostTensor } from '@agentflow/tensor';
import type { DecoderConfig } from '../config/decoder-config';
import { cacheKeyName, cacheValueName } from '../graph/decoder-graph';

/**
 * The key/value cache of one batch for a whole generate call: per layer a buffer of fixed capacity
 * that every step feeds as it is (ONNX Runtime's Node.js binding wraps a CPU feed's typed array
 * without copying it) and the inference graph reads in place, so what a step copies does not grow
 * with the context. The graph returns only the keys and values of the tokens it was fed, which
 * {@link appendToCache} writes in.
 */
export interface KeyValueCache {
  readonly batch: number;
  readonly capacity: number;
  /** Slots written in every row: a step's tokens go to [length, length + sequence). */
  length: number;
  /** Per layer [batch, kvHeads, capacity, headDim]: keys after RoPE. */
  readonly keys: HostTensor<'float32'>[];
  /** Per layer [batch, kvHeads, capacity, headDim]. */
  readonly values: HostTensor<'float32'>[];
  /** [batch, capacity]: 1 where a written slot holds a token, 0 for padding and for slots not written yet. */
  readonly mask: BigInt64Array;
}

/** An empty cache of `capacity` tokens per row (zeros: a slot the mask hides gets probability 0, and 0 x 0 adds nothing). */
export function createKeyValueCache(config: DecoderConfig, batch: number, capacity: number): KeyValueCache {
  if (!Number.isInteger(batch) || batch < 1 || !Number.isInteger(capacity) || capacity < 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `A KV cache needs an integer batch >= 1 and capacity >= 0, got batch ${batch} and capacity ${capacity}.`,
      details: { batch, capacity },
    });
  }
  const shape = [batch, config.numKeyValueHeads, capacity, config.headDim];
  const buffer = (): HostTensor<'float32'> => ({ dtype: 'float32', shape, data: new Float32Array(batch * config.numKeyValueHeads * capacity * config.headDim) });
  return {
    batch,
    capacity,
    length: 0,
    keys: Array.from({ length: config.numHiddenLayers }, buffer),
    values: Array.from({ length: config.numHiddenLayers }, buffer),
    mask: new BigInt64Array(batch * capacity),
  };
}

/**
 * A run's cache inputs and its attention mask over cache slots and new tokens, [batch, capacity +
 * sequence], given the new tokens' mask [batch, sequence]. Without a cache, or before anything is
 * written (a first prefill), the cache is fed with capacity 0, so nothing empty is read.
 */
export function cacheFeeds(
  config: DecoderConfig,
  newMask: HostTensor<'int64'>,
  cache: KeyValueCache | undefined,
): { feeds: Record<string, HostTensor>; attentionMask: HostTensor<'int64'> } {
  const [batch, sequence] = newMask.shape as [number, number];
  const feeds: Record<string, HostTensor> = {};
  if (cache === undefined || cache.length === 0) {
    const empty: HostTensor = { dtype: 'float32', shape: [batch, config.numKeyValueHeads, 0, config.headDim], data: new Float32Array(0) };
    if (cache) checkRoom(cache, batch, sequence);
    for (let layer = 0; layer < config.numHiddenLayers; layer++) {
      feeds[cacheKeyName(layer)] = empty;
      feeds[cacheValueName(layer)] = empty;
    }
    return { feeds, attentionMask: newMask };
  }
  checkRoom(cache, batch, sequence);
  cache.keys.forEach((key, layer) => {
    feeds[cacheKeyName(layer)] = key;
    feeds[cacheValueName(layer)] = cache.values[layer]!;
  });
  const width = cache.capacity + sequence;
  const mask = new BigInt64Array(batch * width);
  for (let row = 0; row < batch; row++) {
    mask.set(cache.mask.subarray(row * cache.capacity, (row + 1) * cache.capacity), row * width);
    mask.set(newMask.data.subarray(row * sequence, (row + 1) * sequence), row * width + cache.capacity);
  }
  return { feeds, attentionMask: { dtype: 'int64', shape: [batch, width], data: mask } };
}

function checkRoom(cache: KeyValueCache, batch: number, sequence: number): void {
  if (batch !== cache.batch || cache.length + sequence > cache.capacity) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `A step of ${batch} rows x ${sequence} tokens does not fit a KV cache of ${cache.batch} rows with ${cache.capacity - cache.length} of ${cache.capacity} slots free: make the cache for the batch, with room for every token fed.`,
      details: { batch, sequence, cacheBatch: cache.batch, capacity: cache.capacity, length: cache.length },
    });
  }
}

/**
 * Writes a run's keys and values (per layer [batch, kvHeads, sequence, headDim]) and the new tokens'
 * mask ([batch, sequence]) into slots [length, length + sequence) of every row, and advances `length`.
 */
export function appendToCache(cache: KeyValueCache, newKeys: readonly HostTensor[], newValues: readonly HostTensor[], newMask: HostTensor<'int64'>): void {
  const [batch, sequence] = newMask.shape as [number, number];
  checkRoom(cache, batch, sequence);
  const [, kvHeads, , headDim] = cache.keys[0]!.shape as [number, number, number, number];
  const run = sequence * headDim; // one row's keys of one head, contiguous in both layouts
  const write = (target: HostTensor<'float32'>, source: HostTensor) => {
    const from = source.data as Float32Array;
    for (let block = 0; block < batch * kvHeads; block++) {
      target.data.set(from.subarray(block * run, (block + 1) * run), (block * cache.capacity + cache.length) * headDim);
    }
  };
  cache.keys.forEach((key, layer) => {
    write(key, newKeys[layer]!);
    write(cache.values[layer]!, newValues[layer]!);
  });
  for (let row = 0; row < batch; row++) {
    cache.mask.set(newMask.data.subarray(row * sequence, (row + 1) * sequence), row * cache.capacity + cache.length);
  }
  cache.length += sequence;
}
