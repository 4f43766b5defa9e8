import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trajectorySchema } from '@agentflow/core';
import { createPythonTool } from '@agentflow/executor';
import { createRandomModel, getModelPreset, saveModelFolder } from '@agentflow/models';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LoopbackServer, ollamaReply, startLoopbackServer } from '../../../../packages/llm/src/testing/loopback-server';
import { isRunning, startVaultHttpServer, writeVaultServer } from '../testing/vault-mcp-server.test-helper';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');

interface AgentflowRun {
  child: ChildProcess;
  result: Promise<{ status: number; stdout: string; stderr: string }>;
}

/** Starts the built CLI asynchronously, so the loopback servers in this process can answer it. */
function startAgentflow(args: string[], env: Record<string, string> = {}): AgentflowRun {
  let child: ChildProcess | undefined;
  const result = new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    child = execFile('node', [cli, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ status, stdout, stderr });
    });
  });
  return { child: child!, result };
}

const agentflow = (...args: string[]) => startAgentflow(args).result;

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

  it('--memory keeps a run that --reference confirms and shows it to the next solve of a similar question', async () => {
    const memory = join(mkdtempSync(join(tmpdir(), 'agentflow-solve-memory-')), 'memory.sqlite');
    const question = 'What is twice the population of Brisk?';
    const args = ['solve', question, '--ollama-url', server.url, '--no-python', '--memory', memory];
    server.push(step('finish', '10240', 'Twice 5120.'));
    const first = await agentflow(...args, '--reference', '10240');
    expect(first.status).toBe(0);
    expect(first.stderr).toContain('reference "10240": correct; kept in memory');
    server.push(step('finish', '10240'));
    const second = await agentflow(...args);
    expect(second.status).toBe(0);
    const prompts = server.requests.map((request) => JSON.stringify((request.body as { messages: unknown }).messages));
    expect(prompts[0]).not.toContain('Solved examples');
    expect(prompts[1]).toContain('Solved examples of similar questions');
    expect(prompts[1]).toContain('Answer: 10240');
    // A wrong answer is reported and not kept.
    server.push(step('finish', '7'));
    const wrong = await agentflow('solve', 'What is the population of Veloria?', '--ollama-url', server.url, '--no-python', '--memory', memory, '--reference', '88000');
    expect(wrong.stderr).toContain('reference "88000": wrong; not kept in memory');
  });

  it('--fixed-modules writes the answer with the fixed model when the planner gives none', async () => {
    // The planner's reply and its one repair call are not JSON: a format error, then the step limit.
    server.push(ollamaReply('not json at all', 'stop', 'qwen3:8b'), ollamaReply('still not json', 'stop', 'qwen3:8b'), ollamaReply('\\boxed{42}', 'stop', 'fixed-model'));
    const { status, stdout } = await agentflow('solve', 'What is 6*7?', '--ollama-url', server.url, '--no-python', '--max-steps', '1', '--fixed-modules', 'ollama:fixed-model');
    expect(status).toBe(0);
    expect(server.requests.map((request) => (request.body as { model: string }).model)).toEqual(['qwen3:8b', 'qwen3:8b', 'fixed-model']);
    expect(stdout).toContain('42');
  });

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

describe('agentflow solve with MCP servers and the network tools', () => {
  let server: LoopbackServer;
  let dir: string;
  let vault: string;
  beforeEach(async () => {
    server = await startLoopbackServer();
    dir = mkdtempSync(join(tmpdir(), 'agentflow-solve-mcp-'));
    vault = writeVaultServer(dir);
  });
  afterEach(async () => {
    await server.close();
    // Should a test fail, no server it started outlives it.
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.pid'))) {
      const pid = pidOf(join(dir, file));
      if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  /** `--mcp` text starting the vault server, quoted as a user would quote it. */
  const vaultCommand = (...args: string[]) => [process.execPath, vault, ...args].map((word) => `'${word}'`).join(' ');
  const pidOf = (file: string) => Number(readFileSync(file, 'utf8'));
  const sentToPlanner = (index: number) =>
    server.requests[index]?.body as { messages: Array<{ content: string }>; format: { properties: { action: { enum: string[] } } } };

  it('--mcp offers the tools of a stdio server as SERVER__TOOL, and the answer is what its tool returned', async () => {
    const pidFile = join(dir, 'vault.pid');
    server.push(step('vault__secret_number', {}, 'Only the vault knows.'), step('finish', '7331', 'Done.'));
    const { status, stdout, stderr } = await agentflow(
      'solve',
      'What is the secret number?',
      '--mcp',
      vaultCommand('--pid-file', pidFile),
      '--planner',
      'ollama:qwen3:8b',
      '--ollama-url',
      server.url,
      '--no-python',
      '--json',
    );
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const trajectory = trajectorySchema.parse(JSON.parse(stdout));
    expect(trajectory.steps[0]?.toolResult).toMatchObject({ output: '7331' });
    expect(trajectory).toMatchObject({ answer: '7331', termination: 'finished' });
    const request = sentToPlanner(0);
    expect(request.format.properties.action.enum).toEqual(['vault__secret_number', 'vault__wait_forever', 'finish']);
    expect(request.messages[0]?.content).toContain('- vault__secret_number: Returns the secret number kept in the vault.');
    expect(isRunning(pidOf(pidFile))).toBe(false);
  });

  it('--mcp-url, --web-search and --wikipedia join python-free catalogues, each tool answered by its own loopback server', async () => {
    const fixture = (name: string) => readFileSync(join(__dirname, '..', '..', '..', '..', 'packages', 'executor', 'src', 'search', '__fixtures__', name), 'utf8');
    const tavily = await startLoopbackServer(() => ({ kind: 'raw', text: fixture('tavily-search.json') }));
    const mediawiki = await startLoopbackServer(() => ({ kind: 'raw', text: fixture('mediawiki-search-extracts.json') }));
    const http = await startVaultHttpServer(vault);
    try {
      server.push(
        step('web_search', { query: 'Who is Leo Messi?', k: 2 }),
        step('wikipedia', { query: 'speed of light' }),
        step('docs__secret_number', {}),
        step('finish', '7331'),
      );
      const { status, stdout, stderr } = await startAgentflow(
        [
          'solve',
          'q',
          ...['--web-search', '--tavily-key-env', 'AGENTFLOW_TEST_TAVILY_KEY', '--tavily-url', tavily.url],
          ...['--wikipedia', '--wikipedia-url', `${mediawiki.url}/w/api.php`],
          ...['--mcp-url', `docs=${http.url}`],
          ...['--planner', 'ollama:m', '--ollama-url', server.url, '--no-python', '--json'],
        ],
        { AGENTFLOW_TEST_TAVILY_KEY: 'tvly-test' },
      ).result;
      expect(stderr).toBe('');
      expect(status).toBe(0);
      const trajectory = trajectorySchema.parse(JSON.parse(stdout));
      expect(sentToPlanner(0).format.properties.action.enum).toEqual(['web_search', 'wikipedia', 'docs__secret_number', 'docs__wait_forever', 'finish']);
      const [search, wiki, secret] = trajectory.steps.map((each) => each.toolResult?.output ?? '');
      expect(search).toMatch(/^Answer: Lionel Messi, born in 1987/);
      expect(tavily.requests[0]).toMatchObject({ method: 'POST', path: '/search', headers: { authorization: 'Bearer tvly-test' } });
      expect(tavily.requests[0]?.body).toMatchObject({ query: 'Who is Leo Messi?', max_results: 2 });
      expect(wiki).toMatch(/^\[1\] Light \(https:\/\/en.wikipedia.org\/wiki\/Light\)\n/);
      expect(mediawiki.requests[0]?.path).toMatch(/^\/w\/api.php\?action=query&.*gsrsearch=speed\+of\+light/);
      expect(secret).toBe('7331');
      expect(trajectory.answer).toBe('7331');
    } finally {
      http.stop();
      await Promise.all([tavily.close(), mediawiki.close()]);
    }
  });

  it('refuses two servers offering the same tool name, naming both and closing them; NAME= tells them apart', async () => {
    const [first, second] = [join(dir, 'a.pid'), join(dir, 'b.pid')];
    // --linger: these servers ignore the end of their stdin; solve must stop them itself.
    const clash = await agentflow(
      ...['solve', 'q', '--planner', 'ollama:m', '--ollama-url', server.url, '--no-python'],
      ...['--mcp', vaultCommand('--pid-file', first, '--linger'), '--mcp', vaultCommand('--pid-file', second, '--linger')],
    );
    expect(clash.status).toBe(2);
    expect(clash.stderr).toBe(
      `error: Two sources offer a tool named "vault__secret_number": --mcp ${JSON.stringify(vaultCommand('--pid-file', first, '--linger'))} (server "vault") and --mcp ${JSON.stringify(vaultCommand('--pid-file', second, '--linger'))} (server "vault"). To keep both, name that server apart: --mcp ${JSON.stringify(`vault2=${vaultCommand('--pid-file', second, '--linger')}`)} gives its tools the prefix vault2__.\n`,
    );
    expect(server.requests).toHaveLength(0);
    expect([isRunning(pidOf(first)), isRunning(pidOf(second))]).toEqual([false, false]);

    server.push(step('mirror__secret_number', {}), step('finish', '7331'));
    const named = await agentflow(
      ...['solve', 'q', '--planner', 'ollama:m', '--ollama-url', server.url, '--no-python', '--json'],
      ...['--mcp', vaultCommand(), '--mcp', `mirror=${vaultCommand()}`],
    );
    expect(named.status).toBe(0);
    expect(sentToPlanner(0).format.properties.action.enum).toEqual([
      'vault__secret_number',
      'vault__wait_forever',
      'mirror__secret_number',
      'mirror__wait_forever',
      'finish',
    ]);
    expect(trajectorySchema.parse(JSON.parse(named.stdout)).steps[0]?.toolResult?.output).toBe('7331');
  });

  it('on SIGINT during an MCP tool call, cancels the run and stops the server before exiting', async () => {
    const [pidFile, waitingFile] = [join(dir, 'vault.pid'), join(dir, 'waiting')];
    server.push(step('vault__wait_forever', {}));
    const run = startAgentflow([
      ...['solve', 'q', '--planner', 'ollama:m', '--ollama-url', server.url, '--no-python'],
      ...['--mcp', vaultCommand('--pid-file', pidFile, '--waiting-file', waitingFile, '--linger')],
    ]);
    await expect.poll(() => existsSync(waitingFile), { timeout: 30_000, interval: 50 }).toBe(true);
    run.child.kill('SIGINT');
    const { status, stdout, stderr } = await run.result;
    expect(status).toBe(1);
    expect(stdout).toMatch(/^Answer: \(none\)\n\(error after 1 step, [\d.]+ s\)\n\(Cancelled\.\)\n$/m);
    expect(stderr).toBe('error [RUNTIME_ERROR]: Cancelled.\n');
    expect(isRunning(pidOf(pidFile))).toBe(false);
  });

  it('names what is wrong with a tool flag before starting anything', async () => {
    const base = ['solve', 'q', '--planner', 'ollama:m', '--ollama-url', server.url, '--no-python'];
    const [key, quote, pipe, assignment, url, lonely, missing] = await Promise.all([
      agentflow(...base, '--web-search', '--tavily-key-env', 'AGENTFLOW_TEST_UNSET_TAVILY_KEY'),
      agentflow(...base, '--mcp', "node 'server.js"),
      agentflow(...base, '--mcp', 'node server.js | tee log'),
      agentflow(...base, '--mcp', 'DEBUG=1 node server.js'),
      agentflow(...base, '--mcp-url', 'docs=ftp://127.0.0.1/mcp'),
      agentflow(...base, '--wikipedia-url', 'http://127.0.0.1:9/w/api.php'),
      agentflow(...base, '--mcp', '/nonexistent/mcp-server --stdio'),
    ]);
    expect(key).toMatchObject({ status: 2, stderr: expect.stringContaining('--web-search needs a Tavily API key, but the environment variable AGENTFLOW_TEST_UNSET_TAVILY_KEY is not set') });
    expect(quote).toMatchObject({ status: 2, stderr: expect.stringContaining(`--mcp "node 'server.js": an unterminated single quote at character 6`) });
    expect(pipe).toMatchObject({ status: 2, stderr: expect.stringContaining('"|" at character 16. The command runs without a shell') });
    expect(assignment).toMatchObject({ status: 2, stderr: expect.stringContaining('environment assignments are not supported; set a variable with env') });
    expect(url).toMatchObject({ status: 2, stderr: expect.stringContaining('--mcp-url must be an http:// or https:// URL, got "ftp://127.0.0.1/mcp"') });
    expect(lonely).toMatchObject({ status: 2, stderr: expect.stringContaining('--wikipedia-url is given without --wikipedia') });
    expect(missing).toMatchObject({
      status: 1,
      stderr: expect.stringContaining('error [NETWORK_ERROR]: --mcp "/nonexistent/mcp-server --stdio": Could not connect to the MCP server /nonexistent/mcp-server --stdio: spawn /nonexistent/mcp-server ENOENT'),
    });
    expect(server.requests).toHaveLength(0);
  });
});
