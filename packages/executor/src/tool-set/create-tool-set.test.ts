import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectMcpServers } from '../mcp/connect-mcp-servers';
import { parseMcpServerSpec } from '../mcp/mcp-server-spec';
import { createToolSet } from './create-tool-set';

/** The arithmetic server (tools `add`, `fail`; announced as `arithmetic`), quoted as a user quotes it. */
const arithmetic = `'${process.execPath}' '${join(__dirname, '..', 'mcp', '__fixtures__', 'arithmetic-server.mjs')}'`;
const documents = [{ id: 'd1', title: 'Lumen', text: 'Lumen is the capital of Ostria.' }];

describe('createToolSet', () => {
  it('offers the built-in tools, then each server as SERVER__TOOL (its NAME= or its announced name), callable', async () => {
    const set = await createToolSet({
      corpus: { documents },
      mcpServers: [parseMcpServerSpec(arithmetic), parseMcpServerSpec(`calc=${arithmetic}`)],
    });
    try {
      expect(set.tools.map((tool) => tool.name)).toEqual(['corpus_search', 'arithmetic__add', 'arithmetic__fail', 'calc__add', 'calc__fail']);
      expect(set.servers.map((server) => [server.name, server.server.name])).toEqual([
        ['arithmetic', 'arithmetic'],
        ['calc', 'arithmetic'],
      ]);
      const add = set.tools.find((tool) => tool.name === 'calc__add')!;
      expect(await add.execute({ a: 2, b: 40 }, { taskId: 't', signal: new AbortController().signal })).toMatchObject({ output: '42' });
    } finally {
      await set.close();
    }
  });

  it('refuses two servers offering one name, naming both and suggesting a NAME= for the second', async () => {
    const spec = parseMcpServerSpec(arithmetic, { option: 'tools.mcp' });
    await expect(createToolSet({ mcpServers: [spec, spec] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: `Two sources offer a tool named "arithmetic__add": tools.mcp ${JSON.stringify(arithmetic)} (server "arithmetic") and tools.mcp ${JSON.stringify(arithmetic)} (server "arithmetic"). To keep both, name that server apart: tools.mcp ${JSON.stringify(`arithmetic2=${arithmetic}`)} gives its tools the prefix arithmetic2__.`,
    });
  });

  it('refuses a built-in tool that a source alongside already offers, by the label given', async () => {
    await expect(
      createToolSet({
        corpus: { documents },
        labels: { corpus: '--corpus' },
        alongside: [{ label: "the task source's tools", remedy: 'leave that tool out', tools: [{ name: 'corpus_search' }] }],
      }),
    ).rejects.toThrow(`Two sources offer a tool named "corpus_search": the task source's tools and --corpus. To keep both, leave out --corpus.`);
  });
});

describe('connectMcpServers', () => {
  it('names the spec of a server that failed, keeping the cause and its code', async () => {
    const failure = await connectMcpServers([parseMcpServerSpec(arithmetic), parseMcpServerSpec('/nonexistent/server --stdio')]).catch(
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({
      code: 'NETWORK_ERROR',
      message: expect.stringMatching(/^MCP server "\/nonexistent\/server --stdio": Could not connect to the MCP server \/nonexistent\/server --stdio: /),
      details: { option: 'MCP server', value: '/nonexistent/server --stdio' },
    });
    await expect(connectMcpServers([parseMcpServerSpec(arithmetic)], { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
