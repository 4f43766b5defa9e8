import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clippedSurrogate } from './clipped-surrogate';
import { type SurrogateSequence, sequenceSurrogateLoss } from './sequence-loss';
import { aggregationTokenWeights } from './token-weights';

// The spec's worked example: rollout 1 (A = +1.5) and rollout 2 (A = -0.5).
const worked: SurrogateSequence[] = [
  { advantages: [1.5, 1.5, 1.5], oldLogprobs: [-1.0, -1.2, -2.0], newLogprobs: [-1.0, -1.0, -1.5] },
  { advantages: [-0.5, -0.5], oldLogprobs: [-0.6, -2.3], newLogprobs: [-1.0, -2.0] },
];
const dapo = { epsLow: 0.2, epsHigh: 0.28 } as const;

describe('clipped surrogate: spec worked example', () => {
  it('token-mean (DAPO) loss is -0.83543495', () => {
    expect(sequenceSurrogateLoss(worked, { ...dapo, aggregation: 'token-mean' }).loss).toBeCloseTo(-0.83543495, 8);
  });

  it('per-sequence mean (GRPO) gives -0.60661834 and symmetric eps 0.2 gives -0.80501412', () => {
    expect(sequenceSurrogateLoss(worked, { ...dapo, aggregation: 'sequence-mean' }).loss).toBeCloseTo(-0.60661834, 8);
    expect(sequenceSurrogateLoss(worked, { epsLow: 0.2, epsHigh: 0.2, aggregation: 'token-mean' }).loss).toBeCloseTo(-0.80501412, 8);
  });

  it('Dr. GRPO divides the token sum by sequences x budget', () => {
    const loss = sequenceSurrogateLoss(worked, { ...dapo, aggregation: 'dr-grpo', tokenBudget: 10 }).loss;
    expect(loss).toBeCloseTo(-(5.2521041 - 1.0749294) / (2 * 10), 7);
  });

  it('d loss / d logp_new = [-0.3, -0.36642083, 0, 0, +0.13498588] and 2 of 5 tokens are clipped', () => {
    const result = sequenceSurrogateLoss(worked, { ...dapo, aggregation: 'token-mean' });
    const gradient = result.gradients.flatMap((row) => Array.from(row));
    [-0.3, -0.36642083, 0, 0, 0.13498588].forEach((value, index) => {
      expect(gradient[index]).toBeCloseTo(value, 8);
    });
    expect(result.clipFraction).toBeCloseTo(0.4, 12);
    expect(result.highClipFraction).toBeCloseTo(0.2, 12);
    expect(result.lowClipFraction).toBeCloseTo(0.2, 12);
    expect(result.tokens).toBe(5);
  });

  it('masking a truncated completion removes it from every count', () => {
    const masked = sequenceSurrogateLoss([worked[0] as SurrogateSequence, { ...(worked[1] as SurrogateSequence), mask: [0, 0] }], {
      ...dapo,
      aggregation: 'token-mean',
    });
    expect(masked.loss).toBeCloseTo(-5.2521041 / 3, 7);
    expect(Array.from(masked.gradients[1] as Float64Array)).toEqual([0, 0]);
  });

  it('rejects mismatched lengths and a KL term without reference log-probs', () => {
    expect(() =>
      clippedSurrogate({ newLogprobs: [0, 0], oldLogprobs: [0], advantages: [1, 1], tokenWeights: [1, 1] }, dapo),
    ).toThrow(/oldLogprobs has 1 entries but newLogprobs has 2/);
    expect(() =>
      clippedSurrogate({ newLogprobs: [0], oldLogprobs: [0], advantages: [1], tokenWeights: [1] }, { ...dapo, klCoefficient: 0.1 }),
    ).toThrow(/needs referenceLogprobs/);
  });
});

// Random batches of ragged sequences with log-probs near each other, as after a few updates.
const sequenceArbitrary = fc
  .integer({ min: 1, max: 6 })
  .chain((length) =>
    fc.record({
      advantage: fc.double({ min: -2, max: 2, noNaN: true }),
      oldLogprobs: fc.array(fc.double({ min: -4, max: -0.05, noNaN: true }), { minLength: length, maxLength: length }),
      shifts: fc.array(fc.double({ min: -0.5, max: 0.5, noNaN: true }), { minLength: length, maxLength: length }),
      reference: fc.array(fc.double({ min: -4, max: -0.05, noNaN: true }), { minLength: length, maxLength: length }),
    }),
  )
  .map(({ advantage, oldLogprobs, shifts, reference }) => ({
    advantages: oldLogprobs.map(() => advantage),
    oldLogprobs,
    newLogprobs: oldLogprobs.map((value, index) => value + (shifts[index] as number)),
    referenceLogprobs: reference,
  }));
const batchArbitrary = fc.array(sequenceArbitrary, { minLength: 1, maxLength: 5 });
const aggregationArbitrary = fc.constantFrom('token-mean' as const, 'sequence-mean' as const, 'dr-grpo' as const);

describe('clipped surrogate properties', () => {
  it('the analytic gradient matches central finite differences (away from the clip kinks), KL term included', () => {
    fc.assert(
      fc.property(batchArbitrary, aggregationArbitrary, fc.constantFrom(0, 0.05), (batch, aggregation, klCoefficient) => {
        const settings = { epsLow: 0.2, epsHigh: 0.28, aggregation, tokenBudget: 8, klCoefficient };
        const { gradients } = sequenceSurrogateLoss(batch, settings);
        const step = 1e-6;
        batch.forEach((sequence, row) => {
          sequence.newLogprobs.forEach((value, token) => {
            const ratio = Math.exp(value - (sequence.oldLogprobs[token] as number));
            if (Math.abs(ratio - 0.8) < 1e-4 || Math.abs(ratio - 1.28) < 1e-4) return;
            const at = (delta: number) => {
              const moved = batch.map((other, otherRow) =>
                otherRow === row ? { ...other, newLogprobs: other.newLogprobs.map((v, t) => (t === token ? v + delta : v)) } : other,
              );
              return sequenceSurrogateLoss(moved, settings).loss;
            };
            const numeric = (at(step) - at(-step)) / (2 * step);
            expect(Math.abs(numeric - (gradients[row]?.[token] as number))).toBeLessThan(1e-6);
          });
        });
      }),
      { numRuns: 60 },
    );
  });

  it('the loss is invariant to padding: padded tokens with mask 0 change nothing', () => {
    fc.assert(
      fc.property(batchArbitrary, aggregationArbitrary, fc.double({ min: -5, max: 0, noNaN: true }), (batch, aggregation, junk) => {
        const settings = { ...dapo, aggregation, tokenBudget: 8 };
        const ragged = sequenceSurrogateLoss(batch, settings);
        const width = Math.max(...batch.map((sequence) => sequence.newLogprobs.length)) + 2;
        const pad = (values: number[]) => [...values, ...new Array(width - values.length).fill(junk)];
        const padded = sequenceSurrogateLoss(
          batch.map((sequence) => ({
            advantages: pad(sequence.advantages),
            oldLogprobs: pad(sequence.oldLogprobs),
            newLogprobs: pad(sequence.newLogprobs.map((value) => value)).map((value, index) =>
              index >= sequence.newLogprobs.length ? junk + 0.7 : value,
            ),
            mask: pad(sequence.newLogprobs.map(() => 1)).map((_value, index) => (index < sequence.newLogprobs.length ? 1 : 0)),
          })),
          settings,
        );
        expect(padded.loss).toBeCloseTo(ragged.loss, 12);
        expect(padded.clipFraction).toBeCloseTo(ragged.clipFraction, 12);
        batch.forEach((sequence, row) => {
          sequence.newLogprobs.forEach((_value, token) => {
            expect(padded.gradients[row]?.[token]).toBeCloseTo(ragged.gradients[row]?.[token] as number, 12);
          });
          for (let token = sequence.newLogprobs.length; token < width; token++) expect(padded.gradients[row]?.[token]).toBe(0);
        });
      }),
    );
  });

  it('micro-batches with the global token weights add up to the whole-batch loss and gradient', () => {
    fc.assert(
      fc.property(batchArbitrary, aggregationArbitrary, fc.integer({ min: 1, max: 3 }), (batch, aggregation, chunk) => {
        const settings = { ...dapo, aggregation, tokenBudget: 8 };
        const whole = sequenceSurrogateLoss(batch, settings);
        const weights = aggregationTokenWeights(batch.map((sequence) => sequence.newLogprobs.map(() => 1)), settings);
        let total = 0;
        for (let start = 0; start < batch.length; start += chunk) {
          const rows = batch.slice(start, start + chunk);
          const part = clippedSurrogate(
            {
              newLogprobs: rows.flatMap((row) => row.newLogprobs),
              oldLogprobs: rows.flatMap((row) => row.oldLogprobs),
              advantages: rows.flatMap((row) => row.advantages),
              tokenWeights: weights.slice(start, start + chunk).flatMap((row) => Array.from(row)),
            },
            dapo,
          );
          total += part.loss;
          const expected = whole.gradients.slice(start, start + chunk).flatMap((row) => Array.from(row));
          expected.forEach((value, index) => {
            expect(part.gradient[index]).toBeCloseTo(value, 12);
          });
        }
        expect(total).toBeCloseTo(whole.loss, 12);
      }),
    );
  });

  it('token weights sum to 1 for the mean aggregations', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 8 }), fc.constantFrom('token-mean' as const, 'sequence-mean' as const), (lengths, aggregation) => {
        fc.pre(lengths.some((length) => length > 0));
        const weights = aggregationTokenWeights(lengths.map((length) => new Array(length).fill(1)), { aggregation });
        const sum = weights.reduce((total, row) => total + row.reduce((inner, value) => inner + value, 0), 0);
        expect(sum).toBeCloseTo(1, 12);
      }),
    );
  });
});
