import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseModelReply } from './parse-model-reply';
import { plannerActionSchema } from './planner-action';
import { llmVerdictSchema } from './verdict';

const scoreSchema = z
  .object({
    score: z.number().min(0).max(1),
    rationale: z.string(),
  })
  .strict();

describe('parseModelReply', () => {
  it('drops a key the schema does not name and reports it', () => {
    const reply = { score: 0.6, rationale: 'ok', analysis: 'ok' };
    expect(scoreSchema.safeParse(reply).success).toBe(false);
    expect(parseModelReply(scoreSchema, reply)).toEqual({ ok: true, value: { score: 0.6, rationale: 'ok' }, droppedKeys: ['analysis'] });
    expect(parseModelReply(llmVerdictSchema, { analysis: 'known', stop: true, confidence: 0.9 })).toEqual({
      ok: true,
      value: { analysis: 'known', stop: true },
      droppedKeys: ['confidence'],
    });
  });

  it('drops nested keys, inside objects and arrays, as dotted paths, without touching the input', () => {
    const schema = z
      .object({
        action_input: z.object({ code: z.string() }).strict(),
        steps: z.array(z.object({ n: z.number() }).strict()),
      })
      .strict();
    const reply = { action_input: { code: '1', extra: true }, steps: [{ n: 1 }, { n: 2, why: 'x', how: 'y' }], note: 'hi' };
    const before = structuredClone(reply);
    const result = parseModelReply(schema, reply);
    expect(result).toEqual({
      ok: true,
      value: { action_input: { code: '1' }, steps: [{ n: 1 }, { n: 2 }] },
      droppedKeys: expect.arrayContaining(['action_input.extra', 'steps.1.why', 'steps.1.how', 'note']),
    });
    expect(result.droppedKeys).toHaveLength(4);
    expect(reply).toEqual(before);
  });

  it('keeps the types and ranges of required fields, and lists only the real problems', () => {
    const outOfRange = parseModelReply(scoreSchema, { score: 1.5, rationale: 'ok', analysis: 'ok' });
    expect(outOfRange).toEqual({ ok: false, error: 'score: Too big: expected number to be <=1', droppedKeys: ['analysis'] });
    const missing = parseModelReply(scoreSchema, { rationale: 'ok', confidence: 1 });
    expect(missing).toMatchObject({ ok: false, droppedKeys: ['confidence'] });
    expect(!missing.ok && missing.error).toBe('score: Invalid input: expected number, received undefined');
    expect(parseModelReply(scoreSchema, 'just text')).toMatchObject({ ok: false, error: '(root): Invalid input: expected object, received string', droppedKeys: [] });
    expect(parseModelReply(plannerActionSchema, { thought: 't', action: 7, action_input: 'x', extra: 1 })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^action: Invalid input: expected string/),
    });
  });

  it('drops the extra keys of the one union branch that fits', () => {
    const schema = z.object({ input: z.union([z.string(), z.object({ code: z.string() }).strict()]) }).strict();
    expect(parseModelReply(schema, { input: { code: '1', lang: 'py' } })).toEqual({
      ok: true,
      value: { input: { code: '1' } },
      droppedKeys: ['input.lang'],
    });
  });

  it('never changes the parsed value of a valid reply when random extra keys are added, and counts them', () => {
    const extraKey = fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !['score', 'rationale'].includes(key));
    const json = fc.jsonValue({ maxDepth: 2 });
    fc.assert(
      fc.property(
        fc.record({ score: fc.double({ min: 0, max: 1, noNaN: true }), rationale: fc.string() }),
        fc.dictionary(extraKey, json, { maxKeys: 6 }),
        (valid, extras) => {
          const reply = { ...extras, ...valid };
          const result = parseModelReply(scoreSchema, reply);
          expect(result).toEqual({ ok: true, value: scoreSchema.parse(valid), droppedKeys: expect.any(Array) });
          expect([...result.droppedKeys].sort()).toEqual(Object.keys(extras).sort());
        },
      ),
    );
  });
});
