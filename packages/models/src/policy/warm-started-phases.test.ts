import { describe, expect, it } from 'vitest';
import { plannedPhaseTraining, trainsWarmAdapterOn } from './warm-started-phases';

const lora = { kind: 'lora' } as const;
const full = { kind: 'full' } as const;
const warmLora = { trainable: lora, lora: { rank: 128, alpha: 256 } };
const warmFull = { trainable: full, lora: { rank: 128, alpha: 256 } };

describe('the phases of a warm-started policy', () => {
  it('goes on with the warm adapter only for LoRA after LoRA without an adapter of its own', () => {
    expect(trainsWarmAdapterOn(warmLora, { trainable: lora, lora: null })).toBe(true);
    expect(trainsWarmAdapterOn(warmLora, { trainable: lora, lora: { rank: 16 } })).toBe(false);
    expect(trainsWarmAdapterOn(warmLora, { trainable: full, lora: null })).toBe(false);
    expect(trainsWarmAdapterOn(warmFull, { trainable: full, lora: { rank: 16 } })).toBe(false);
    expect(() => trainsWarmAdapterOn(warmFull, { trainable: lora, lora: null })).toThrow(/leaves no adapter/);
  });

  it('plans the larger state of the two phases: full training when either is, a copy of the warm model as reference only for a full trained phase with the KL term', () => {
    expect(plannedPhaseTraining({ warm: warmLora, trained: { trainable: lora, lora: { rank: 16 } }, klReference: true })).toEqual({ loraRank: 16, trained: true });
    expect(plannedPhaseTraining({ warm: warmLora, trained: { trainable: lora, lora: null }, klReference: true })).toEqual({ loraRank: 128, trained: true });
    expect(plannedPhaseTraining({ warm: warmLora, trained: { trainable: full, lora: null }, klReference: true })).toEqual({ fullTraining: { reference: 'copy' } });
    expect(plannedPhaseTraining({ warm: warmFull, trained: { trainable: full, lora: null }, klReference: false })).toEqual({ fullTraining: { reference: 'none' } });
    expect(plannedPhaseTraining({ warm: warmFull, trained: { trainable: lora, lora: { rank: 16 } }, klReference: true })).toEqual({ fullTraining: { reference: 'none' } });
  });
});
