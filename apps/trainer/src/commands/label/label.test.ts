import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentFlowError, Trajectory } from '@agentflow/core';
import { prmExampleSchema } from '@agentflow/prm';
import { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { startOpenAiCompatibleServer } from '@agentflow/llm/testing';
import { registerLabelCommand } from '../label';

function trajectory(id: string): Trajectory {
  const step = (index: number, action: string, toolOutput: string) => ({
    index,
    prompt: [{ role: 'user' as const, content: 'p' }],
    completion: '{}',
    truncated: false,
    action: { thought: `step ${index}`, action, action_input: { x: index } },
    toolResult: { output: toolOutput, truncated: false, durationMs: 1 },
    timings: { plannerMs: 1, toolMs: 1, verifierMs: 0 },
  });
  return {
    id,
    question: `question ${id}`,
    steps: [step(0, 'search', 'SECRET-TOOL-OUTPUT'), step(1, 'python', 'SECRET-TOOL-OUTPUT')],
    answer: '1',
    outcomeReward: 1,
    termination: 'finished',
    startedAt: new Date(0).toISOString(),
    durationMs: 1,
  };
}

/** OpenAI chat-completions on 127.0.0.1: python decisions score 0.8, others 0.3. */
async function startJudge() {
  const bodies: string[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    bodies.push(body);
    const score = body.includes('action: python') ? 0.8 : 0.3;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'deepseek-chat',
        choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ score, rationale: 'ok' }) }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 2000, completion_tokens: 100, total_tokens: 2100 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies, close: () => server.close() };
}

async function runCli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const program = new Command('agentflow').exitOverride();
  registerLabelCommand(program, { stdout: (text) => out.push(text), stderr: (text) => err.push(text) });
  await program.parseAsync(['node', 'agentflow', ...args]);
  return { stdout: out.join(''), stderr: err.join('') };
}

describe('agentflow label', () => {
  it('labels trajectories with a judge at an OpenAI-compatible endpoint and prints the cost', async () => {
    const judge = await startJudge();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'agentflow-label-'));
      const input = join(dir, 'trajectories.jsonl');
      writeFileSync(input, `${JSON.stringify(trajectory('a'))}\n${JSON.stringify(trajectory('b'))}\n`);
      const out = join(dir, 'labels.jsonl');
      const args = ['label', '--trajectories', input, '--out', out, '--endpoint', judge.url, '--api-key-env', ''];
      const { stdout } = await runCli(args);
      const summary = JSON.parse(stdout);
      expect(summary).toMatchObject({ steps: 4, labelled: 4, failed: 0, calls: 4 });
      expect(summary.costUsd).toBeCloseTo((4 * (2000 * 0.28 + 100 * 0.42)) / 1e6, 12);
      const examples = readFileSync(out, 'utf8').trim().split('\n').map((line) => prmExampleSchema.parse(JSON.parse(line)));
      expect(examples.map((example) => example.label)).toEqual([0.3, 0.8, 0.3, 0.8]);
      // A step's own tool output never reaches the judge; it is context for the steps after it.
      const firstSteps = judge.bodies.filter((body) => body.includes('Previous decisions: none'));
      expect(firstSteps).toHaveLength(2);
      for (const body of firstSteps) expect(body).not.toContain('SECRET-TOOL-OUTPUT');
      for (const body of judge.bodies.filter((body) => !firstSteps.includes(body))) expect(body).toContain('-> SECRET-TOOL-OUTPUT');
      // A second run is answered from the cache: no new calls, no cost.
      const again = JSON.parse((await runCli(args)).stdout);
      expect(again).toMatchObject({ labelled: 4, calls: 0, costUsd: 0 });
      expect(judge.bodies).toHaveLength(4);
    } finally {
      judge.close();
    }
  });

  it('keeps the steps where a judged file and a Monte-Carlo file agree', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentflow-consensus-'));
    const base = { trajectoryId: 't', question: 'q', history: [], action: { thought: 't', action: 'python', action_input: 'x' } };
    const judged = [0.9, 0.8, 0.1].map((label, stepIndex) => ({ ...base, id: `t:${stepIndex}`, stepIndex, label, provenance: { labeller: 'judge' } }));
    const monteCarlo = [6, 0, 0].map((successes, stepIndex) => ({
      ...base,
      id: `t:${stepIndex}`,
      stepIndex,
      label: successes / 8,
      provenance: { labeller: 'monte-carlo', samples: 8, successes },
    }));
    writeFileSync(join(dir, 'judged.jsonl'), judged.map((record) => `${JSON.stringify(record)}\n`).join(''));
    writeFileSync(join(dir, 'mc.jsonl'), monteCarlo.map((record) => `${JSON.stringify(record)}\n`).join(''));
    const out = join(dir, 'kept.jsonl');
    const summary = JSON.parse(
      (await runCli(['label', '--labeller', 'consensus', '--judged', join(dir, 'judged.jsonl'), '--monte-carlo', join(dir, 'mc.jsonl'), '--out', out])).stdout,
    );
    expect(summary).toMatchObject({ kept: 2, disagreed: 1, unmatched: 0 });
    const kept = readFileSync(out, 'utf8').trim().split('\n').map((line) => prmExampleSchema.parse(JSON.parse(line)));
    expect(kept.map((example) => [example.id, example.provenance.labeller])).toEqual([
      ['t:0', 'consensus'],
      ['t:2', 'consensus'],
    ]);
  });

  it('names the judge, the steps and its reply when no step gets a usable label', async () => {
    vi.stubEnv('AGENTFLOW_LABEL_TEST_KEY', 'test-key');
    const judge = await startOpenAiCompatibleServer('deepseek-chat', 'test-key', () => 'The step looks good to me.');
    try {
      const dir = mkdtempSync(join(tmpdir(), 'agentflow-label-'));
      const input = join(dir, 'trajectories.jsonl');
      writeFileSync(input, `${JSON.stringify(trajectory('a'))}\n`);
      const out = join(dir, 'labels.jsonl');
      const args = ['label', '--trajectories', input, '--out', out, '--endpoint', judge.url, '--api-key-env', 'AGENTFLOW_LABEL_TEST_KEY'];
      const error = await runCli(args).then(
        () => undefined,
        (thrown: unknown) => thrown as AgentFlowError,
      );
      expect(error?.code).toBe('RUNTIME_ERROR');
      expect(error?.message).toContain(`label: the judge deepseek-chat at ${judge.url} gave no usable reply for any of 2 steps.`);
      expect(error?.message).toContain('The step looks good to me.');
      expect(error?.message).toContain('Point --endpoint, --judge-model or --response-format at a judge');
      expect(readFileSync(out, 'utf8')).toBe('');
    } finally {
      vi.unstubAllEnvs();
      await judge.close();
    }
  });

  it('names a missing input as a usage error', async () => {
    await expect(runCli(['label', '--out', '/tmp/x.jsonl'])).rejects.toThrow(/--trajectories: --labeller judge needs --trajectories FILE/);
  });
});
