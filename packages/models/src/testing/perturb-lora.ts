import { createRandom } from '@agentflow/core';
import type { LoraAdapter } from '../lora/lora-adapter';

/**
 * Fills every LoRA B matrix of `adapter`, in place and in module order, with uniform values in
 * [-scale / 2, scale / 2) drawn from `seed`: a fresh adapter (B = 0) changes nothing, this one
 * changes what the model samples. Returns the adapter.
 */
export function perturbLoraAdapter(adapter: LoraAdapter, settings: { seed?: number; scale?: number } = {}): LoraAdapter {
  const random = createRandom(settings.seed ?? 0);
  const scale = settings.scale ?? 0.5;
  for (const matrices of adapter.matrices.values()) {
    for (let index = 0; index < matrices.b.length; index++) matrices.b[index] = (random.next() - 0.5) * scale;
  }
  return adapter;
}
