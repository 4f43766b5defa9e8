/**
 * `agentflow eval --memory FILE` through the built CLI: two near-identical JSONL items, an
 * Ollama-format loopback planner that answers each right, and a SQLite memory in a temp dir.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatRequestBody, type LoopbackChatServer, startOllamaServer } from '@agentflow/llm/testing';
import type { EvalSummary } from '@agentflow/eval';

const cli = resolve(__dirname, '..', '..', '..', 'dist', 'cli.js');

/** The two alike items, after two unlike ones: BM25 leaves out terms found in at least half the records, so a store of one item alone would match nothing. */
const ALIKE = [
  { id: 'times-3', question: 'What is 17 times 3? Give the product as a number.', answer: '51' },
  { id: 'times-4', question: 'What is 17 times 4? Give the product as a number.', answer: '68' },
] as const;
const ITEMS = [
  { id: 'capital', question: 'Name the capital city of France.', answer: 'Paris' },
  { id: 'spider', question: 'How many legs does a spider have?', answer: '8' },
  ...ALIKE,
];

function agentflow(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('node', [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (status) => resolvePromise({ status, stdout, stderr }));
  });
}

/** The user message of a planner request: `Question: ...`, then any solved examples. */
const promptOf = (body: ChatRequestBody) => body.messages.find((message) => message.role === 'user')?.content ?? '';
const itemOf = (body: ChatRequestBody) => {
  const item = ITEMS.find((candidate) => promptOf(body).startsWith(`Question: ${candidate.question}\n`));
  if (!item) throw new Error(`no scripted item in ${promptOf(body).slice(0, 200)}`);
  return item;
};

describe('agentflow eval --memory FILE (loopback planner)', () => {
  let work: string;
  let planner: LoopbackChatServer;

  beforeAll(async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm --filter @agentflow/trainer build\` first.`);
    work = mkdtempSync(join(tmpdir(), 'agentflow-eval-memory-'));
    writeFileSync(join(work, 'items.jsonl'), `${ITEMS.map((item) => JSON.stringify(item)).join('\n')}\n`);
    planner = await startOllamaServer('qwen3:8b', (body) => JSON.stringify({ thought: 'scripted', action: 'finish', action_input: itemOf(body).answer }));
  });

  afterAll(async () => {
    await planner?.close();
  });

  it("shows an item the solved runs of other items, never its own; records the memory and refuses a resume with another", async () => {
    const memory = join(work, 'memory.sqlite');
    const out = join(work, 'eval');
    const args = [
      'eval',
      ...['--planner', 'ollama:qwen3:8b', '--ollama-url', planner.url, '--no-python'],
      ...['--data', join(work, 'items.jsonl'), '--format', 'jsonl', '--samples', '2', '--concurrency', '1', '--out', out],
    ];
    const result = await agentflow([...args, '--memory', memory, '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(existsSync(memory)).toBe(true);

    // One run at a time, in file order, both samples of an item before the next item.
    const prompts = planner.requests.map((body) => ({ id: itemOf(body).id, prompt: promptOf(body) }));
    expect(prompts.map((request) => request.id)).toEqual(ITEMS.flatMap((item) => [item.id, item.id]));
    const promptsOf = (id: string) => prompts.filter((request) => request.id === id).map((request) => request.prompt);
    const [first, firstAgain] = promptsOf(ALIKE[0].id) as [string, string];
    const [second, secondAgain] = promptsOf(ALIKE[1].id) as [string, string];
    // Nothing like the first was solved before it; its second sample is not shown its own solution.
    expect(first).not.toContain('Solved examples of similar questions');
    expect(firstAgain).not.toContain('Solved examples of similar questions');
    // The second sees the first solved, and its second sample still not its own.
    expect(second).toContain('Solved examples of similar questions');
    expect(second).toContain(`Question: ${ALIKE[0].question}`);
    expect(second).toContain(`Answer: ${ALIKE[0].answer}`);
    expect(secondAgain).toContain(`Answer: ${ALIKE[0].answer}`);
    expect(secondAgain).not.toContain(`Answer: ${ALIKE[1].answer}`);

    const summary = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as EvalSummary;
    expect(summary).toMatchObject({ complete: true, total: 8, correct: 8 });
    expect(summary.settings.memory).toEqual({ path: memory, k: 3 });

    // The memory is part of the experiment: another file, another k or none is refused, naming the option.
    const [otherFile, otherK, none] = await Promise.all([
      agentflow([...args, '--memory', join(work, 'other.sqlite')]),
      agentflow([...args, '--memory', memory, '--memory-k', '5']),
      agentflow(args),
    ]);
    expect(otherFile.status).toBe(2);
    expect(otherFile.stderr).toContain(`memory.path = ${JSON.stringify(memory)} (--memory)`);
    expect(otherK.status).toBe(2);
    expect(otherK.stderr).toContain('memory.k = 3 (--memory-k); this command gives 5');
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('(--memory); this command gives null');
    expect(existsSync(join(work, 'other.sqlite'))).toBe(false);
  }, 60_000);

  it('refuses --memory-k without --memory', async () => {
    const result = await agentflow(['eval', '--planner', 'ollama:qwen3:8b', '--data', join(work, 'items.jsonl'), '--memory-k', '2', '--out', join(work, 'no-memory')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--memory-k 2 needs --memory FILE');
  });
});
