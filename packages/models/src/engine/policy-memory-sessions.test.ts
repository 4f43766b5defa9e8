import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { DEFAULT_PREFILL_CHUNK_TOKENS } from './generate';
import { planMemory } from './memory-plan';
import { plannedPolicySessions } from './policy-memory-sessions';

describe('plannedPolicySessions', () => {
  it("samples in chunks of generate's own default, scores and trains micro-batches of full-length rows", () => {
    const sessions = plannedPolicySessions({ promptTokens: 1500, completionTokens: 500, trainingRows: 2, generationRows: 8, recompute: true });
    expect(sessions).toEqual([
      { kind: 'inference', name: 'generation', rows: 8, sequence: 2000, scored: 0, chunk: DEFAULT_PREFILL_CHUNK_TOKENS },
      { kind: 'inference', name: 'log-probs', rows: 2, sequence: 2000, scored: 500 },
      { kind: 'training', name: 'training step', tokens: 4000, rows: 2, completionTokens: 1000, recompute: true },
    ]);
    expect(DEFAULT_PREFILL_CHUNK_TOKENS).toBe(512);
  });

  it('leaves generation out when rollouts are sampled elsewhere, and a smaller prefill chunk needs less', () => {
    const settings = { promptTokens: 4000, completionTokens: 100, trainingRows: 1, recompute: false, scoringName: 'log-probs (rollouts on vLLM)' };
    expect(plannedPolicySessions(settings).map((session) => session.name)).toEqual(['log-probs (rollouts on vLLM)', 'training step']);
    const generation = (prefillChunkTokens?: number) =>
      planMemory({
        device: 'cpu',
        availableBytes: 2 ** 40,
        models: [{ name: 'planner', config: getModelPreset('qwen3-0.6b-shape'), sessions: plannedPolicySessions({ ...settings, generationRows: 4, ...(prefillChunkTokens ? { prefillChunkTokens } : {}) }) }],
      }).rows.find((row) => row.part === 'generation (activations)')!.bytes;
    expect(generation(128)).toBeLessThan(generation());
  });
});
