import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { connectMcpTools, createPythonTool } from '@agentflow/executor';
import { beforeAll, describe, expect, it } from 'vitest';

// `agentflow mcp` as a user runs it: the built CLI, spoken to by the MCP SDK's Client over
// StdioClientTransport (connectMcpTools wraps exactly those two).
const cli = join(__dirname, '..', '..', '..', 'dist', 'cli.js');
const corpus = join(__dirname, '__fixtures__', 'corpus.jsonl');
const pythonMissing = await createPythonTool().unavailableReason();
const context = () => ({ taskId: 'unused: the server keys state by connection', signal: new AbortController().signal });

describe('agentflow mcp', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` before the CLI tests.`);
  });

  it('serves corpus_search and a stateful python over stdio', async () => {
    const connection = await connectMcpTools({
      transport: { type: 'stdio', command: process.execPath, args: [cli, 'mcp', '--corpus', corpus, '--offline'] },
    });
    try {
      const tools = Object.fromEntries(connection.tools.map((tool) => [tool.name, tool]));
      expect(Object.keys(tools)).toEqual(['python', 'corpus_search']);
      expect(tools.python!.inputJsonSchema).toMatchObject({ type: 'object', required: ['code'] });
      const hit = await tools.corpus_search!.execute({ query: 'capital of Ostria' }, context());
      expect(hit.output).toMatch(/^\[1\] Ostria \(id d1, score \d/);
      if (pythonMissing) {
        console.warn(`python part skipped: ${pythonMissing}`);
        return;
      }
      expect((await tools.python!.execute({ code: 'x = 2 ** 10' }, context())).error).toBeUndefined();
      expect((await tools.python!.execute({ code: 'x + 1' }, context())).output).toBe('1025\n');
      const shadow = await tools.python!.execute({ code: 'open("/etc/shadow").read()' }, context());
      expect(shadow.error).toMatch(/Error: .*FileNotFoundError/s);
    } finally {
      await connection.close();
    }
  });

  it('refuses to start with nothing to serve, and names a missing corpus', () => {
    const empty = spawnSync(process.execPath, [cli, 'mcp', '--no-python', '--offline'], { encoding: 'utf8', input: '' });
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('agentflow mcp has no tool to serve');
    const missing = spawnSync(process.execPath, [cli, 'mcp', '--corpus', '/nonexistent/corpus.jsonl'], { encoding: 'utf8', input: '' });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('Corpus file not found: /nonexistent/corpus.jsonl');
    expect(missing.stdout).toBe('');
  });
});
