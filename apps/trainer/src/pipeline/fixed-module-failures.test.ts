import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Fixed modules (the verifier and generator) that misbehave end a run at once, naming the
// server, what it answered and the key to change (issue #33), instead of failing each agent run
// at its time limit minutes later. Real HTTP servers on loopback; the built CLI.

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'short-run.yaml');
const servers: Server[] = [];

/** A loopback server; `handle` answers (or does not answer) each request. */
async function serve(handle: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function agentflow(...args: string[]): Promise<{ status: number | null; stderr: string; seconds: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn('node', [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr, seconds: (performance.now() - started) / 1000 });
    });
  });
}

const runWith = (url: string) =>
  agentflow('run', '--config', config, '--out', join(mkdtempSync(join(tmpdir(), 'agentflow-fixed-')), 'run'), '--quiet', '--set', `fixedModules={kind: ollama, url: "${url}", model: "qwen3:8b"}`);

describe('agentflow run with fixed modules that misbehave', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
  });

  it('refuses a server that never answers within seconds, naming it and fixedModules', async () => {
    const url = await serve(() => {
      // Accepts the connection and never answers.
    });
    const result = await runWith(url);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`fixed modules (ollama qwen3:8b): ${url}/api/tags is unreachable`);
    expect(result.stderr).toContain('change fixedModules (its url and model), or set fixedModules: null');
    expect(result.seconds).toBeLessThan(20);
  }, 60_000);

  it('ends the run at the first chat that answers the wrong shape, naming the URL and what it answered', async () => {
    const url = await serve((request, response) => {
      response.setHeader('content-type', 'application/json');
      // The model list is fine; the chat reply is not an Ollama chat reply.
      response.end(request.url === '/api/tags' ? JSON.stringify({ models: [{ name: 'qwen3:8b' }] }) : JSON.stringify({ foo: 1 }));
    });
    const result = await runWith(url);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/did not finish \(error\): .*POST http:\/\/127\.0\.0\.1:\d+\/api\/chat answered HTTP 200 with a body that is not an Ollama chat reply/);
    expect(result.stderr).toContain('{"foo":1}');
    expect(result.seconds).toBeLessThan(40);
  }, 60_000);
});
