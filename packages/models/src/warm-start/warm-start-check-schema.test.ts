import { describe, expect, it } from 'vitest';
import type { WarmStartCheck } from './warm-start-check';
import { warmStartCheckSchema } from './warm-start-check-schema';

describe('warmStartCheckSchema', () => {
  it("gives the default run's check, keeps null (no check), and refuses unknown keys and bounds", () => {
    const check: WarmStartCheck | null = warmStartCheckSchema.parse(undefined);
    // No early abandon by default: with no retry left, it could only turn a slow start into a failed run.
    expect(check).toEqual({ heldOutTasks: 40, minAccuracy: 0.2, maxLoss: 0.15, abandon: null });
    expect(warmStartCheckSchema.parse(null)).toBeNull();
    expect(warmStartCheckSchema.parse({ abandon: {} })).toMatchObject({ abandon: { afterEpoch: 3, aboveLoss: 0.3 }, heldOutTasks: 40 });
    // The retries from new initialisations are gone, and a config that asks for them is told so.
    const retries = warmStartCheckSchema.safeParse({ attempts: 2 });
    expect(retries.success).toBe(false);
    expect(retries.error?.issues[0]?.message).toMatch(/^warmStart\.check\.attempts is gone: a warm start is no longer retried/);
    expect(warmStartCheckSchema.safeParse({ minAcuracy: 0.5 }).success).toBe(false);
    expect(warmStartCheckSchema.safeParse({ minAccuracy: 1.5 }).success).toBe(false);
  });
});
