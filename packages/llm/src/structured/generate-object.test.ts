import { AgentFlowError } from '@agentflow/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createOllamaModel } from '../ollama/ollama-model';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../testing/loopback-server';
import { extractLastJsonObject } from './extract-json';
import { generateObject } from './generate-object';

const answerSchema = z.object({ answer: z.number().int() }).strict();
const messages = [{ role: 'user' as const, content: 'What is 6*7? Reply {"answer": n}.' }];

describe('generateObject over a loopback Ollama server', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());
  const model = () => createOllamaModel({ model: 'm', endpoints: [server.url] });

  it('returns the typed value and sends the zod schema as `format`', async () => {
    server.push(ollamaReply('{"answer": 42}'));
    const result = await generateObject(model(), answerSchema, messages);
    expect(result.ok && result.value).toEqual({ answer: 42 });
    expect(result.ok && result.droppedKeys).toEqual([]);
    const format = (server.requests[0]!.body as { format: Record<string, unknown> }).format;
    expect(format.properties).toEqual({ answer: { type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) } });
  });

  it('feeds the validation error back and accepts the repaired reply', async () => {
    server.push(ollamaReply('{"answer": "forty-two"}'), ollamaReply('{"answer": 42}'));
    const result = await generateObject(model(), answerSchema, messages);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.attempts).toHaveLength(2);
    expect(result.degraded).toBe(false);
    const second = server.requests[1]?.body as { messages: Array<{ role: string; content: string }> };
    expect(second.messages.slice(1)).toEqual([
      { role: 'assistant', content: '{"answer": "forty-two"}' },
      { role: 'user', content: expect.stringContaining('answer: Invalid input: expected number, received string') },
    ]);
    // The attempt that produced the value carries the exact conversation that was sent.
    expect(result.attempt.messages).toEqual(second.messages);
  });

  it('degrades to the last JSON object inside prose', async () => {
    const prose = 'Sure! First {"answer": 1} no wait, the answer is {"answer": 42} ```';
    server.push(ollamaReply(prose), ollamaReply(prose));
    const result = await generateObject(model(), answerSchema, messages, { maxRepairs: 1 });
    expect(result.ok && result.degraded).toBe(true);
    expect(result.ok && result.value).toEqual({ answer: 42 });
  });

  it('returns a typed failure with the raw text instead of throwing', async () => {
    server.push(ollamaReply('I cannot'), ollamaReply('{"answer": 4'), ollamaReply('{"answer": [}'));
    const result = await generateObject(model(), answerSchema, messages);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.rawText).toBe('{"answer": [}');
    expect(result.error).toMatch(/not valid JSON/);
    expect(result.attempts).toHaveLength(3);
  });

  it('accepts a reply with keys the schema does not name in one call, dropping and reporting them', async () => {
    server.push(ollamaReply('{"answer": 42, "analysis": "6*7 is 42", "meta": {"confidence": 0.9}}'));
    const result = await generateObject(model(), answerSchema, messages);
    expect(result).toMatchObject({ ok: true, value: { answer: 42 }, degraded: false, droppedKeys: ['analysis', 'meta'] });
    expect(server.requests).toHaveLength(1);
    // What the model is asked for stays closed.
    expect((server.requests[0]!.body as { format: Record<string, unknown> }).format).toMatchObject({ additionalProperties: false });
  });

  it('drops extra keys in the degraded extraction too, and feeds back only the real problems', async () => {
    server.push(ollamaReply('{"answer": "42", "why": "x"}'), ollamaReply('Final: {"answer": 42, "why": "x"} done'));
    const result = await generateObject(model(), answerSchema, messages, { maxRepairs: 1 });
    expect(result).toMatchObject({ ok: true, value: { answer: 42 }, degraded: true, droppedKeys: ['why'] });
    expect(result.attempts[0]?.error).toBe('answer: Invalid input: expected number, received string');
    const second = server.requests[1]?.body as { messages: Array<{ content: string }> };
    expect(second.messages.at(-1)?.content).not.toMatch(/why|Unrecognized/);
  });

  it('still throws transport failures, which are not malformed output', async () => {
    server.push({ kind: 'json', status: 404, body: { error: 'model not found' } });
    const error = await generateObject(model(), answerSchema, messages).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'HTTP_ERROR')).toBe(true);
  });
});

describe('extractLastJsonObject', () => {
  it('skips braces inside strings and returns the last top-level object', () => {
    expect(extractLastJsonObject('a {"x": "}{"} b {"y": {"z": 1}} c')).toEqual({ y: { z: 1 } });
  });
  it('falls back to an earlier object when the last does not parse', () => {
    expect(extractLastJsonObject('{"ok": true} then {python: dict}')).toEqual({ ok: true });
  });
  it('returns undefined when there is no object', () => {
    expect(extractLastJsonObject('no json [1, 2] {unclosed')).toBeUndefined();
  });
});
