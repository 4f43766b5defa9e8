import { describe, expect, it } from 'vitest';
import { DEFAULT_PRM_MAX_TOKENS, prmInputTokenEstimate, prmSettingsSchema, resolvePrmTrainable } from './prm-settings';

describe('the PRM settings a run config names', () => {
  it('resolves what trains with the head from trainable or its earlier spelling, lora', () => {
    expect(resolvePrmTrainable({})).toEqual({ kind: 'head' });
    expect(resolvePrmTrainable({ lora: { rank: 16, alpha: 32 } })).toEqual({ kind: 'lora', rank: 16, alpha: 32 });
    expect(resolvePrmTrainable({ lora: null, trainable: { kind: 'full', frozen: [] } })).toEqual({ kind: 'full', frozen: [] });
    // The schema does the same, and refuses both at once.
    expect(prmSettingsSchema.parse({ lora: { rank: 4, alpha: 8 } }).trainable).toMatchObject({ kind: 'lora', rank: 4, alpha: 8 });
    expect(prmSettingsSchema.safeParse({ lora: { rank: 4, alpha: 8 }, trainable: { kind: 'head' } }).success).toBe(false);
  });

  it('estimates the longest input from the planner shape, cut to maxTokens as the PRM cuts it', () => {
    const planner = { promptTokens: 300, completionTokens: 100 };
    expect(prmInputTokenEstimate({ input: 'chat' }, planner)).toBe(400);
    expect(prmInputTokenEstimate({ input: 'text' }, planner)).toBe(DEFAULT_PRM_MAX_TOKENS);
    expect(prmInputTokenEstimate({ input: 'text', maxTokens: 4096 }, planner)).toBe(612);
    expect(prmInputTokenEstimate({ input: 'chat', maxTokens: 128 }, planner)).toBe(128);
    expect(prmSettingsSchema.parse({}).maxTokens).toBe(DEFAULT_PRM_MAX_TOKENS);
  });
});
