import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trajectorySchema } from '@agentflow/core';
import { createPythonTool } from '@agentflow/executor';
import { createRandomModel, getModelPreset, saveModelFolder } from '@agentflow/models';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../../../../packages/llm/src/testing/loopback-server';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');

/** Runs the built CLI asynchronously, so the loopback server in this process can answer it. */
function agentflow(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('node', [cli, ...args], { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

const step = (action: string, input: unknown, thought = '') =>
  ollamaReply(JSON.stringify({ thought, action, action_input: input }), 'stop', 'qwen3:8b');

const pythonUnavailable = await createPythonTool()
  .unavailableReason()
  .catch((error: unknown) => String(error));
if (pythonUnavailable) console.warn(`Skipping the python solve test: ${pythonUnavailable}`);

describe('agentflow solve against a loopback Ollama server', () => {
  let server: LoopbackServer;
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` before the CLI tests.`);
  });
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => server.close());

  it.skipIf(pythonUnavailable !== undefined)('--json prints the trajectory with the answer, using corpus_search and python', async () => {
    const corpus = join(mkdtempSync(join(tmpdir(), 'agentflow-solve-corpus-')), 'corpus.jsonl');
    writeFileSync(
      corpus,
      [
        { id: 'd1', title: 'Brisk', text: 'Brisk is the capital of Veloria. Its population is 5120.' },
        { id: 'd2', title: 'Veloria', text: 'Veloria is a small country.' },
      ]
        .map((document) => JSON.stringify(document))
        .join('\n'),
    );
    server.push(
      step('corpus_search', { query: 'population of Brisk' }, 'Look it up.'),
      step('python', { code: 'x = 5120 * 2\nx + 1' }, 'Compute it.'),
      step('finish', '10241', 'Done.'),
    );
    const { status, stdout, stderr } = await agentflow(
      'solve',
      'What is twice the population of Brisk, plus one?',
      '--corpus',
      corpus,
      '--planner',
      'ollama:qwen3:8b',
      '--ollama-url',
      server.url,
      '--json',
    );
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const trajectory = trajectorySchema.parse(JSON.parse(stdout));
    expect(trajectory).toMatchObject({ answer: '10241', termination: 'finished' });
    expect(trajectory.steps[0]?.toolResult?.output).toContain('Its population is 5120.');
    expect(trajectory.steps[1]?.toolResult?.output.trim()).toBe('10241');
    const request = server.requests[0]?.body as { model: string; think: boolean; format: { properties: { action: { enum: string[] } } } };
    expect(request.model).toBe('qwen3:8b');
    expect(request.think).toBe(false);
    expect(request.format.properties.action.enum).toEqual(['python', 'corpus_search', 'finish']);
  });

  it('prints the steps as text, records format errors, and lets the generator answer at --max-steps', async () => {
    // Each step: a malformed reply, then a malformed repair.
    server.push(
      ollamaReply('I think the answer is 42'),
      ollamaReply('{"thought": "x"'),
      step('python', { code: '1' }, 'python is not offered'),
      step('python', { code: '1' }),
      ollamaReply('Final answer: 42'),
    );
    const { status, stdout } = await agentflow(
      'solve',
      'What is 6*7?',
      '--planner',
      'ollama:m',
      '--ollama-url',
      server.url,
      '--no-python',
      '--max-steps',
      '2',
    );
    expect(status).toBe(0);
    expect(stdout).toMatch(/^\[1\] format error: not valid JSON/m);
    expect(stdout).toMatch(/^\[2\] format error: action: Invalid input: expected "finish"/m);
    expect(stdout).toMatch(/^Answer: 42\n\(max_steps after 2 steps, [\d.]+ s\)\n$/m);
    expect(server.requests).toHaveLength(5);
  });

  it('exits 1 naming the URL and the status when the planner model fails', async () => {
    server.push({ kind: 'json', status: 404, body: { error: 'model "nope" not found, try pulling it first' } });
    const { status, stderr } = await agentflow('solve', 'q', '--planner', 'ollama:nope', '--ollama-url', server.url, '--no-python');
    expect(status).toBe(1);
    expect(stderr).toContain(`POST ${server.url}/api/chat failed with HTTP 404: model "nope" not found`);
  });

  it('rejects a malformed --planner, --max-steps or model folder with exit code 2', async () => {
    // Independent processes: run them side by side.
    const [bad, steps, local] = await Promise.all([
      agentflow('solve', 'q', '--planner', 'gpt4'),
      agentflow('solve', 'q', '--max-steps', 'ten'),
      agentflow('solve', 'q', '--planner', 'local:/nonexistent/policy', '--no-python'),
    ]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--planner "gpt4" is not one of ollama:MODEL, openai:MODEL or local:DIR');
    expect(steps.status).toBe(2);
    expect(steps.stderr).toContain('--max-steps must be a positive integer, got "ten"');
    expect(local.status).toBe(2);
    expect(local.stderr).toContain('/nonexistent/policy/config.json is missing; expected a model folder');
  });

  it('runs a local tiny policy (local:DIR) with the compact prompt and records token ids and log-probs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentflow-solve-policy-'));
    await saveModelFolder(dir, createRandomModel(getModelPreset('tiny'), 1));
    const { status, stdout } = await agentflow('solve', 'What is 6*7?', '--planner', `local:${dir}`, '--max-steps', '2', '--json', '--no-python');
    expect(status).toBe(0);
    const trajectory = trajectorySchema.parse(JSON.parse(stdout));
    const [first] = trajectory.steps;
    expect(first?.prompt).toEqual([{ role: 'user', content: 'Q: What is 6*7?\nTools: finish(answer)\nJSON:' }]);
    // Constrained decoding: even random weights produce a parsable action.
    expect(first?.action?.action).toBe('finish');
    expect(first?.promptTokenIds?.length).toBeGreaterThan(40);
    expect(first?.completionLogprobs).toHaveLength(first?.completionTokenIds?.length ?? -1);
    const bytes = (first?.completionTokenIds ?? []).filter((id) => id < 256);
    expect(Buffer.from(bytes).toString('utf8')).toBe(first?.completion);
    expect(trajectory.termination).toBe('finished');
  });

  it('names the missing API key variable for openai:MODEL', async () => {
    const { status, stderr } = await agentflow(
      'solve',
      'q',
      '--planner',
      'openai:gpt-4.1',
      '--api-key-env',
      'AGENTFLOW_TEST_UNSET_KEY',
      '--no-python',
    );
    expect(status).toBe(2);
    expect(stderr).toContain('AGENTFLOW_TEST_UNSET_KEY is not set');
  });
});
