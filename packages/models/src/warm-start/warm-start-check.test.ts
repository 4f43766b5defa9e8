import { describe, expect, it } from 'vitest';
import { abandonedEarly, checkWarmStart, heldOutSplit, type WarmStartCheck } from './warm-start-check';

// The trainer's defaults (its warmStart.check block).
const check: WarmStartCheck = { heldOutTasks: 40, minAccuracy: 0.2, maxLoss: 0.15, abandon: { afterEpoch: 3, aboveLoss: 0.3 } };
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `t${i}` }));

describe('the warm start check', () => {
  it('holds back the last training tasks, never demonstrated, and refuses to hold back all of them', () => {
    const { taught, heldOut } = heldOutSplit(items(100), { heldOutTasks: 40, demonstrations: null });
    expect(heldOut).toEqual(items(100).slice(60));
    expect(taught).toHaveLength(60);
    expect(heldOutSplit(items(100), { heldOutTasks: 40, demonstrations: 10 }).taught).toEqual(items(10));
    expect(heldOutSplit(items(10), { heldOutTasks: 0 })).toEqual({ taught: items(10), heldOut: [] });
    expect(() => heldOutSplit(items(24), { heldOutTasks: 40 })).toThrow('heldOutTasks is 40, but there are 24 training task(s): hold back fewer');
  });

  it('abandons a warm start whose loss is above the bound after the given epoch only', () => {
    expect(abandonedEarly(check, 3, 0.318)).toBe(true);
    expect(abandonedEarly(check, 3, Number.NaN)).toBe(true);
    expect(abandonedEarly(check, 3, 0.256)).toBe(false);
    expect(abandonedEarly(check, 2, 0.9)).toBe(false);
    expect(abandonedEarly({ ...check, abandon: null }, 3, 9)).toBe(false);
  });

  it('fails on the loss before measuring accuracy, then on accuracy, and says why', async () => {
    let measured = 0;
    const accuracy = (value: number) => async () => {
      measured++;
      return value;
    };
    const abandoned = await checkWarmStart(check, { losses: [2, 0.8, 0.79], epochs: 8 }, accuracy(1));
    expect(abandoned).toMatchObject({ ok: false, heldOutAccuracy: null, epochs: 3 });
    expect(abandoned.reason).toBe('abandoned after epoch 3 at loss 0.790 (above 0.3)');
    const high = await checkWarmStart(check, { losses: [2, 0.3, 0.2], epochs: 3 }, accuracy(1));
    expect(high.reason).toBe('ended at loss 0.200 (above maxLoss 0.15)');
    expect(measured).toBe(0);
    const weak = await checkWarmStart(check, { losses: [2, 0.1], epochs: 2 }, accuracy(0.125));
    expect(weak).toMatchObject({ ok: false, heldOutAccuracy: 0.125, reason: 'answered 12.5% of the held-back tasks (below minAccuracy 0.2)' });
    expect(await checkWarmStart(check, { losses: [2, 0.1], epochs: 2 }, accuracy(0.5))).toMatchObject({ ok: true, heldOutAccuracy: 0.5, finalLoss: 0.1 });
  });
});
