import { createRandom, plannerActionSchema } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { completionCost, initialStack, isComplete, type Stack, step } from './json-automaton';
import { compileJsonSchema } from './schema-node';
import { createJsonSchemaConstraints } from './token-constraint';

const encoder = new TextEncoder();

function accepts(schema: Record<string, unknown>, text: string | Uint8Array): boolean {
  let stacks: (Stack | null)[] = [initialStack(compileJsonSchema(schema))];
  for (const byte of typeof text === 'string' ? encoder.encode(text) : text) {
    stacks = stacks.flatMap((stack) => step(stack, byte));
    if (stacks.length === 0) return false;
  }
  return stacks.some(isComplete);
}

const plannerSchema = (tools: string[]) =>
  z.toJSONSchema(plannerActionSchema.extend({ action: z.enum(['finish', ...tools]) })) as Record<string, unknown>;

describe('JSON schema automaton', () => {
  const schema = plannerSchema(['search', 'python']);

  it('accepts valid planner actions in any key order and rejects invalid ones', () => {
    expect(accepts(schema, '{"thought":"x","action":"search","action_input":"q"}')).toBe(true);
    expect(accepts(schema, '{"action":"finish","action_input":{"a":[1,-2.5e3,true,null,{"b":"\\u00e9"}]},"thought":"é"}')).toBe(true);
    expect(accepts(schema, '{"thought":"x","action":"searc","action_input":"q"}')).toBe(false);
    expect(accepts(schema, '{"thought":"x","action":"search"}')).toBe(false); // missing required key
    expect(accepts(schema, '{"thought":"x","action":"search","action_input":"q","extra":1}')).toBe(false);
    expect(accepts(schema, '{"thought":"x","thought":"y","action":"search","action_input":"q"}')).toBe(false);
    expect(accepts(schema, '{"thought":"a\nb","action":"search","action_input":"q"}')).toBe(false); // raw newline
    expect(accepts(schema, '{"thought":"x","action":"search","action_input":5}')).toBe(false);
    // Invalid UTF-8 or a bad escape is refused in values and in free keys alike.
    const withKey = (key: number[]) => Uint8Array.from([...encoder.encode('{"thought":"x","action":"finish","action_input":{"'), ...key, ...encoder.encode('":1}}')]);
    expect(accepts(schema, withKey([0xc3, 0xa9]))).toBe(true);
    expect(accepts(schema, withKey([0xff]))).toBe(false);
    expect(accepts(schema, withKey([0xc3]))).toBe(false);
    expect(accepts(schema, withKey([0x5c, 0x71]))).toBe(false);
    expect(accepts(schema, '{"thought":"\\u12g4","action":"finish","action_input":""}')).toBe(false);
  });

  it('handles numbers, integers, arrays and nullable types', () => {
    const numbers = { type: 'object', properties: { n: { type: 'integer' }, x: { type: ['number', 'null'] }, list: { type: 'array', items: { type: 'number' }, minItems: 1 } }, required: ['n', 'x', 'list'], additionalProperties: false };
    expect(accepts(numbers, '{"n":-12,"x":0.5e-3,"list":[1,2]}')).toBe(true);
    expect(accepts(numbers, '{"n":1.5,"x":null,"list":[1]}')).toBe(false);
    expect(accepts(numbers, '{"n":1,"x":null,"list":[]}')).toBe(false);
    expect(accepts(numbers, '{"n":01,"x":null,"list":[1]}')).toBe(false);
    expect(accepts({ type: 'integer' }, '42')).toBe(true);
    for (const text of ['0', '-0', '1E+2', '12.50e-1', '-3.25']) expect(accepts({ type: 'number' }, text), text).toBe(true);
    for (const text of ['1.', '1e', '-', '.5', '1.2.3', '+1', '00']) expect(accepts({ type: 'number' }, text), text).toBe(false);
  });

  it('completion cost is the length of the shortest valid completion', () => {
    const root = compileJsonSchema(schema);
    const shortest = '{"thought":"","action":"finish","action_input":""}';
    expect(completionCost(initialStack(root))).toBe(shortest.length);
    let stacks: (Stack | null)[] = [initialStack(root)];
    for (const [index, byte] of encoder.encode(shortest).entries()) {
      stacks = stacks.flatMap((stack) => step(stack, byte));
      expect(Math.min(...stacks.map(completionCost))).toBe(shortest.length - index - 1);
    }
  });

  it('random walks over a byte vocabulary always end in JSON that validates', () => {
    const tokenBytes = Array.from({ length: 256 }, (_, byte) => Uint8Array.of(byte));
    const constraints = createJsonSchemaConstraints({ tokenBytes: [...tokenBytes, undefined], eosTokenIds: [256] });
    const constraint = constraints(schema);
    const validator = plannerActionSchema.extend({ action: z.enum(['search', 'python', 'finish']) });
    const random = createRandom(7);
    for (let sample = 0; sample < 200; sample++) {
      let state = constraint.initial;
      const bytes: number[] = [];
      for (let remaining = 120; remaining > 0; remaining--) {
        const allowed = constraint.allowedTokens(state, remaining);
        const token = random.choice(allowed);
        if (token === 256) break;
        bytes.push(token);
        state = constraint.advance(state, token);
      }
      const text = new TextDecoder().decode(Uint8Array.from(bytes));
      expect(validator.safeParse(JSON.parse(text)).success, text).toBe(true);
    }
  });
});
