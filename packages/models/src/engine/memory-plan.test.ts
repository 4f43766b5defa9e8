import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { formatMemoryPlan, layerParameterCount, parameterCount, type PlannedSession, planMemory } from './memory-plan';

const small = getModelPreset('qwen3-0.6b-shape');
const big = getModelPreset('qwen3-8b-shape');
const sessions: PlannedSession[] = [
  { kind: 'inference', name: 'generation', rows: 8, sequence: 2048, scored: 0, chunk: 512 },
  { kind: 'inference', name: 'log-probs', rows: 1, sequence: 2048, scored: 1024 },
  { kind: 'training', name: 'training step', rows: 1, tokens: 2048, completionTokens: 1024, recompute: true },
];
const gib = 2 ** 30;

describe('planMemory', () => {
  it('counts parameters as the checkpoints hold them (Qwen3-0.6B tied, Qwen3-8B untied)', () => {
    expect(parameterCount(small)).toBe(596_049_920);
    expect(parameterCount(big)).toBe(8_190_735_360);
  });

  it('counts one decoder layer from a shape, head width derived when absent', () => {
    // Qwen3-0.6B: q 2048x1024, k and v 1024x1024, o 1024x2048, three MLP 3072x1024; norms 2x1024 + 2x128.
    expect(layerParameterCount(small)).toBe(2 * 2048 * 1024 + 2 * 1024 * 1024 + 3 * 3072 * 1024 + 2 * 1024 + 2 * 128);
    const shape = { hiddenSize: 128, intermediateSize: 256, numAttentionHeads: 4, numKeyValueHeads: 2 };
    expect(layerParameterCount(shape)).toBe(layerParameterCount({ ...shape, headDim: 32 }));
  });

  it('holds one copy of the weights on the CPU whatever the sessions, one per graph on CUDA', () => {
    const cpu = planMemory({ device: 'cpu', availableBytes: 64 * gib, models: [{ name: 'planner', config: small, sessions }] });
    const cuda = planMemory({ device: 'cuda', availableBytes: 139 * gib, models: [{ name: 'planner', config: small, sessions }] });
    const weights = (plan: typeof cpu) => plan.rows.find((row) => row.part === 'weights')!.bytes;
    expect(weights(cpu)).toBe(parameterCount(small) * 4);
    // generation and log-probs share the inference graph's session: two graphs, two copies.
    expect(weights(cuda)).toBe(2 * parameterCount(small) * 4);
    expect(cuda.totalBytes).toBeGreaterThan(cpu.totalBytes);
  });

  it("adds every session's activations on the CPU while each arena keeps its peak, the largest with the arena off", () => {
    const plan = (cpuArena?: boolean) =>
      planMemory({ device: 'cpu', availableBytes: 64 * gib, ...(cpuArena === undefined ? {} : { cpuArena }), models: [{ name: 'planner', config: small, sessions }] });
    const activations = (result: ReturnType<typeof plan>) => result.rows.filter((row) => row.part.endsWith('(activations)')).map((row) => row.bytes);
    const fixed = (result: ReturnType<typeof plan>) => result.rows.reduce((sum, row) => sum + (row.part.endsWith('(activations)') ? 0 : row.bytes), 0);
    const arena = plan();
    const inference = Math.max(...activations(arena).slice(0, 2)); // generation and log-probs share one session
    expect(arena.totalBytes).toBeCloseTo(fixed(arena) + inference + activations(arena)[2]!, 0);
    const heap = plan(false);
    expect(heap.totalBytes).toBeCloseTo(fixed(heap) + Math.max(...activations(heap)), 0);
    expect(heap.totalBytes).toBeLessThan(arena.totalBytes);
    expect(formatMemoryPlan(heap).at(-1)).toMatch(/the largest session activations \(arena off\)/);
    expect(formatMemoryPlan(arena).at(-1)).toMatch(/each arena keeps its peak/);
  });

  it('recomputation shrinks the training activations, and a plan that does not fit says so', () => {
    const training = (config: typeof big, recompute: boolean) =>
      planMemory({
        device: 'cuda',
        availableBytes: 139 * gib,
        models: [{ name: 'planner', config, loraRank: 64, trained: true, sessions: [{ kind: 'training', name: 'step', rows: 1, tokens: 3072, completionTokens: 1024, recompute }] }],
      });
    // At 3k-token rows the kept attention scores dominate; recomputation keeps about a quarter of them.
    expect(training(big, true).totalBytes).toBeLessThan(training(big, false).totalBytes / 2);
    expect(training(small, true).totalBytes).toBeLessThan(training(small, false).totalBytes);
    expect(training(small, true).fits).toBe(true);
    const kept = training(big, false);
    expect(kept.fits).toBe(false);
    expect(formatMemoryPlan(kept).at(-1)).toMatch(/of 139\.00 GiB on cuda .*DOES NOT FIT: [\d.]+ GiB over/);
    expect(formatMemoryPlan(training(small, true)).at(-1)).toMatch(/: fits$/);
  });

  it('refuses an available memory that is not a positive number of bytes', () => {
    expect(() => planMemory({ device: 'cpu', availableBytes: 0, models: [] })).toThrow(/availableBytes must be a positive number of bytes, got 0/);
  });
});
