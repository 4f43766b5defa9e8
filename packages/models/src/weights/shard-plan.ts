import { AgentFlowError, describeValue } from '@agentflow/core';

/**
 * Largest shard {@link saveModelFolder} writes by default: 5 GB (5 x 10^9 bytes), the default of
 * transformers 4.x `save_pretrained(max_shard_size="5GB")` ("GB" is decimal there, "GiB" binary),
 * which is how the published Qwen3 checkpoints are cut. transformers 5 raised its default to 50 GB.
 */
export const DEFAULT_MAX_SHARD_BYTES = 5_000_000_000;

/** One safetensors file of a saved folder and the tensors it holds, in the order given. */
export interface WeightShard {
  /** `model.safetensors` alone, else `model-00001-of-00003.safetensors`, ... */
  file: string;
  names: string[];
  /** Bytes of the tensors' data in the file (the header not counted, as transformers counts). */
  bytes: number;
}

/** How a folder's tensors are cut into files: {@link planShards}. */
export interface ShardPlan {
  shards: WeightShard[];
  /** Bytes of all tensor data: the index's `metadata.total_size`. */
  totalBytes: number;
}

/**
 * Cuts tensors into safetensors files as transformers' `save_pretrained` does: in the order given,
 * a tensor starts a new shard when it would take the current one past `maxShardBytes`; a tensor
 * larger than that gets a shard of its own. One shard is the single file `model.safetensors`
 * (no index); more are named `model-0000i-of-0000n.safetensors`. (huggingface_hub puts an
 * oversized tensor's shard before the one being filled; here the shards keep the tensors' order.)
 */
export function planShards(tensors: ReadonlyArray<{ name: string; bytes: number }>, maxShardBytes: number): ShardPlan {
  if (!Number.isSafeInteger(maxShardBytes) || maxShardBytes <= 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `maxShardBytes must be a positive whole number of bytes, got ${describeValue(maxShardBytes)}; transformers' default is ${DEFAULT_MAX_SHARD_BYTES} (5 GB).`,
      details: { maxShardBytes },
    });
  }
  const groups: Array<{ names: string[]; bytes: number }> = [];
  let current: { names: string[]; bytes: number } = { names: [], bytes: 0 };
  for (const { name, bytes } of tensors) {
    if (current.names.length > 0 && current.bytes + bytes > maxShardBytes) {
      groups.push(current);
      current = { names: [], bytes: 0 };
    }
    current.names.push(name);
    current.bytes += bytes;
  }
  if (current.names.length > 0 || groups.length === 0) groups.push(current);
  const count = groups.length;
  const pad = (value: number) => String(value).padStart(5, '0');
  return {
    shards: groups.map((group, index) => ({ ...group, file: count === 1 ? 'model.safetensors' : `model-${pad(index + 1)}-of-${pad(count)}.safetensors` })),
    totalBytes: groups.reduce((sum, group) => sum + group.bytes, 0),
  };
}
