import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@agentflow/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRegistry } from '../registry/tool-registry';
import { createCorpusSearchTool } from '../search/corpus-search-tool';
import { connectMcpTools } from './connect-mcp-tools';
import { createMcpServer } from './mcp-server';

const shout: Tool<{ text: string }> = {
  name: 'shout',
  description: 'Upper-cases text.',
  inputSchema: z.object({ text: z.string() }),
  async execute(input) {
    return { output: input.text.toUpperCase(), truncated: false, durationMs: 1 };
  },
};
const corpus = createCorpusSearchTool({ documents: [{ id: 'd1', title: 'Lumen', text: 'Lumen is the capital of Ostria.' }] });
const registry = () => createToolRegistry({ tools: [shout as Tool, corpus as Tool] });

async function connectedClient() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(registry()).connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

describe('createMcpServer', () => {
  it('lists the registry with JSON schemas and runs calls', async () => {
    const client = await connectedClient();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['shout', 'corpus_search']);
    expect(tools[1]!.inputSchema).toMatchObject({ type: 'object', required: ['query'], properties: { query: { type: 'string' } } });
    const result = await client.callTool({ name: 'shout', arguments: { text: 'hi' } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'HI' }], isError: false });
    const search = await client.callTool({ name: 'corpus_search', arguments: { query: 'capital' } });
    expect((search.content as Array<{ text: string }>)[0]!.text).toMatch(/^\[1\] Lumen \(id d1/);
    await client.close();
  });

  it('returns unknown tools and invalid input as tool errors, not protocol failures', async () => {
    const client = await connectedClient();
    const unknown = await client.callTool({ name: 'nope', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect((unknown.content as Array<{ text: string }>)[0]!.text).toBe('Error: Unknown tool "nope"; known tools: shout, corpus_search.');
    const invalid = await client.callTool({ name: 'shout', arguments: { text: 3 } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as Array<{ text: string }>)[0]!.text).toMatch(/text: Invalid input: expected string, received number/);
    await client.close();
  });
});

describe('connectMcpTools', () => {
  it('joins the tools of a stdio server to a registry', async () => {
    const connection = await connectMcpTools({
      transport: { type: 'stdio', command: process.execPath, args: [join(__dirname, '__fixtures__', 'arithmetic-server.mjs')] },
      prefix: 'math_',
    });
    try {
      expect(connection.server).toEqual({ name: 'arithmetic', version: '1.0.0' });
      const tools = registry();
      tools.register(...connection.tools);
      expect(tools.names()).toEqual(['shout', 'corpus_search', 'math_add', 'math_fail']);
      expect(tools.catalogue()[2]!.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' } } });
      expect(await tools.execute({ tool: 'math_add', input: { a: 2, b: 40 } }, { taskId: 't' })).toMatchObject({ output: '42' });
      const invalid = await tools.execute({ tool: 'math_add', input: { a: 'two', b: 1 } }, { taskId: 't' });
      expect(invalid.error).toMatch(/Invalid input for tool "math_add": a:/);
      expect((await tools.execute({ tool: 'math_fail', input: { reason: 'on purpose' } }, { taskId: 't' })).error).toBe('failed: on purpose');
    } finally {
      await connection.close();
    }
  });

  it('joins the tools of a Streamable HTTP server on loopback', async () => {
    const http = createServer(async (request, response) => {
      // Stateless mode: one server and transport per request, as the SDK documents.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const server = createMcpServer(registry());
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request, response);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as { port: number };
    const connection = await connectMcpTools({ transport: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } });
    try {
      expect(connection.tools.map((tool) => tool.name)).toEqual(['shout', 'corpus_search']);
      const result = await connection.tools[0]!.execute({ text: 'over http' }, { taskId: 't', signal: new AbortController().signal });
      expect(result.output).toBe('OVER HTTP');
    } finally {
      await connection.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  it('ends a failed start with what the server wrote to stderr', async () => {
    const script = "console.error('vault: config file /etc/vault.toml not found'); process.exit(3)";
    await expect(connectMcpTools({ transport: { type: 'stdio', command: process.execPath, args: ['-e', script] } })).rejects.toThrow(
      /^Could not connect to the MCP server .+: .+\. Its stderr ended with:\nvault: config file \/etc\/vault.toml not found$/s,
    );
  });

  it('stops connecting to a server that never answers when the signal aborts, and has stopped it when it throws', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'agentflow-mcp-silent-')), 'pid');
    // Reads nothing and ignores the end of its stdin: only the SIGTERM of close() stops it.
    const script = `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`;
    const silent = { type: 'stdio' as const, command: process.execPath, args: ['-e', script] };
    const controller = new AbortController();
    // Abort once the server runs, whatever the machine's load.
    const poll = setInterval(() => existsSync(pidFile) && controller.abort(), 20);
    const failure = await connectMcpTools({ transport: silent, signal: controller.signal }).catch((error: unknown) => error);
    clearInterval(poll);
    expect(failure).toMatchObject({ code: 'ABORTED', message: expect.stringMatching(/^Connecting to the MCP server .+ was cancelled\.$/) });
    expect(() => process.kill(Number(readFileSync(pidFile, 'utf8')), 0)).toThrow(/ESRCH/);
    await expect(connectMcpTools({ transport: silent, signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('names the server it could not reach', async () => {
    await expect(connectMcpTools({ transport: { type: 'http', url: 'http://127.0.0.1:9/mcp' } })).rejects.toThrow(
      /Could not connect to the MCP server http:\/\/127.0.0.1:9\/mcp/,
    );
    await expect(connectMcpTools({ transport: { type: 'stdio', command: '/nonexistent/server' } })).rejects.toThrow(
      /Could not connect to the MCP server \/nonexistent\/server/,
    );
  });
});
