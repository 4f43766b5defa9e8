import { describe, expect, it } from 'vitest';
import type { WarmStartCheck } from './warm-start-check';
import { warmStartCheckSchema } from './warm-start-check-schema';

describe('warmStartCheckSchema', () => {
  it("gives the default run's check, keeps null (no check), and refuses unknown keys and bounds", () => {
    const check: WarmStartCheck | null = warmStartCheckSchema.parse(undefined);
    expect(check).toEqual({ heldOutTasks: 40, minAccuracy: 0.2, maxLoss: 0.15, abandon: { afterEpoch: 3, aboveLoss: 0.3 }, attempts: 6 });
    expect(warmStartCheckSchema.parse(null)).toBeNull();
    expect(warmStartCheckSchema.parse({ abandon: null, attempts: 2 })).toMatchObject({ abandon: null, attempts: 2, heldOutTasks: 40 });
    expect(warmStartCheckSchema.safeParse({ minAcuracy: 0.5 }).success).toBe(false);
    expect(warmStartCheckSchema.safeParse({ attempts: 21 }).success).toBe(false);
    expect(warmStartCheckSchema.safeParse({ minAccuracy: 1.5 }).success).toBe(false);
  });
});
