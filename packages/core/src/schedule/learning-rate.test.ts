import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scheduledLearningRate } from './learning-rate';

describe('scheduledLearningRate', () => {
  it('warms up linearly from peak / warmupSteps to the peak on the last warm-up step', () => {
    const schedule = { peak: 1, warmupSteps: 4, decay: { kind: 'constant' } } as const;
    expect([0, 1, 2, 3, 4, 50].map((step) => scheduledLearningRate(schedule, step))).toEqual([0.25, 0.5, 0.75, 1, 1, 1]);
  });

  it('follows a half cosine from the peak to minRatio x peak over decay.steps, then holds the floor', () => {
    const schedule = { peak: 2, warmupSteps: 3, decay: { kind: 'cosine', steps: 10, minRatio: 0.1 } } as const;
    expect(scheduledLearningRate(schedule, 3)).toBe(2);
    expect(scheduledLearningRate(schedule, 8)).toBeCloseTo(1.1, 12); // halfway: the midpoint of 2 and 0.2
    expect(scheduledLearningRate(schedule, 13)).toBeCloseTo(0.2, 12);
    expect(scheduledLearningRate(schedule, 40)).toBeCloseTo(0.2, 12);
  });

  it('never rises after the warm-up and stays within [minRatio x peak, peak]', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-8, max: 10, noNaN: true }),
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 500 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (peak, warmupSteps, steps, minRatio) => {
          const schedule = { peak, warmupSteps, decay: { kind: 'cosine', steps, minRatio } } as const;
          let previous = Number.POSITIVE_INFINITY;
          for (let step = warmupSteps; step <= warmupSteps + steps + 2; step++) {
            const rate = scheduledLearningRate(schedule, step);
            const tolerance = 1e-12 * peak;
            if (rate > previous + tolerance || rate > peak + tolerance || rate < minRatio * peak - tolerance) return false;
            previous = rate;
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });
});
