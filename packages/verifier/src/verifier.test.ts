import type { PlannerAction, ToolResult } from '@agentflow/core';
import { createOllamaModel } from '@agentflow/llm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../../llm/src/testing/loopback-server';
import type { VerifiedStep } from './rules/rule-verdict';
import { createVerifier } from './verifier';

const ok: ToolResult = { output: '42', truncated: false, durationMs: 1 };
const failed: ToolResult = { output: '', error: 'boom', truncated: false, durationMs: 1 };
const call = (code: string, result: ToolResult = ok): VerifiedStep => ({
  action: { thought: 't', action: 'python', action_input: { code } } satisfies PlannerAction,
  toolResult: result,
});
const verify = (steps: VerifiedStep[], elapsedMs = 0, rules = {}) =>
  createVerifier({ rules }).verify({ question: 'q', steps, elapsedMs });

describe('rule verdicts', () => {
  it('continues after an ordinary tool step', async () => {
    expect(await verify([call('1')])).toEqual({ stop: false, reason: 'continue' });
  });

  it('stops on finish, even at the step limit', async () => {
    const finish: VerifiedStep = { action: { thought: '', action: 'finish', action_input: '42' } };
    expect(await verify([call('1'), finish], 0, { maxSteps: 2 })).toEqual({ stop: true, reason: 'finish_action' });
  });

  it('stops at the step limit and the time limit', async () => {
    expect((await verify([call('1'), call('2')], 0, { maxSteps: 2 })).reason).toBe('max_steps');
    expect((await verify([call('1')], 1000, { timeLimitMs: 1000 })).reason).toBe('timeout');
  });

  it('stops when the same action and input repeat verbatim, whatever the key order', async () => {
    const a: VerifiedStep = { action: { thought: 'x', action: 'search', action_input: { q: 'a', k: 2 } }, toolResult: ok };
    const b: VerifiedStep = { action: { thought: 'y', action: 'search', action_input: { k: 2, q: 'a' } }, toolResult: ok };
    expect((await verify([a, b])).reason).toBe('repeated_action');
    expect((await verify([a, call('1'), b])).reason).toBe('continue');
    expect((await verify([a, b], 0, { repeatLimit: 3 })).reason).toBe('continue');
  });

  it('stops after a streak of tool errors, not after scattered ones', async () => {
    expect((await verify([call('1', failed), call('2', failed), call('3', failed)])).reason).toBe('tool_error_streak');
    expect((await verify([call('1', failed), call('2'), call('3', failed)])).reason).toBe('continue');
  });

  it('rejects bad rule settings with the key', () => {
    expect(() => createVerifier({ rules: { maxSteps: 0 } })).toThrow(/rules\.maxSteps/);
  });
});

describe('LLM verdict over a loopback Ollama server', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());

  const verifier = () =>
    createVerifier({ llm: { model: createOllamaModel({ model: 'judge', endpoints: [server.url] }), maxRepairs: 0 } });

  it('stops when the model says the answer is known, keeping its analysis', async () => {
    server.push(ollamaReply('{"analysis":"Step 1 printed 42, the answer.","stop":true}'));
    const verdict = await verifier().verify({
      question: 'What is 6*7?',
      steps: [call('6*7')],
      elapsedMs: 0,
      memoryText: 'Step 1: python 6*7 -> 42',
    });
    expect(verdict).toEqual({ stop: true, reason: 'llm_stop', analysis: 'Step 1 printed 42, the answer.' });
    const sent = server.requests[0]!.body as { messages: Array<{ content: string }>; format: { required: string[] } };
    expect(sent.messages[1]!.content).toContain('Step 1: python 6*7 -> 42');
    expect(sent.format.required).toEqual(['analysis', 'stop']);
  });

  it('stops in one call on a reply with a key the schema does not name', async () => {
    server.push(ollamaReply('{"analysis": "Step 1 printed 42.", "stop": true, "confidence": 0.9}'));
    const verdict = await verifier().verify({ question: 'What is 6*7?', steps: [call('6*7')], elapsedMs: 0 });
    expect(verdict).toEqual({ stop: true, reason: 'llm_stop', analysis: 'Step 1 printed 42.' });
    expect(server.requests).toHaveLength(1);
    // The schema sent stays closed.
    expect((server.requests[0]!.body as { format: Record<string, unknown> }).format).toMatchObject({ additionalProperties: false });
  });

  it('continues, with the failure noted, when the model output is malformed', async () => {
    server.push(ollamaReply('{"analysis": "yes", "stop": "maybe"}'));
    const verdict = await verifier().verify({ question: 'q', steps: [call('1')], elapsedMs: 0 });
    expect(verdict.stop).toBe(false);
    expect(verdict.analysis).toMatch(/LLM verdict unusable \(stop: Invalid input: expected boolean/);
  });

  it('does not ask the model when a rule already decided, or after a format error', async () => {
    const finish: VerifiedStep = { action: { thought: '', action: 'finish', action_input: '42' } };
    expect((await verifier().verify({ question: 'q', steps: [finish], elapsedMs: 0 })).reason).toBe('finish_action');
    expect((await verifier().verify({ question: 'q', steps: [{ action: null }], elapsedMs: 0 })).reason).toBe('continue');
    expect(server.requests).toHaveLength(0);
  });
});
