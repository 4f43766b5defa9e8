// A minimal external MCP server over stdio, written with the SDK's high-level API.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'arithmetic', version: '1.0.0' });
server.registerTool(
  'add',
  { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
);
server.registerTool(
  'fail',
  { description: 'Always fails.', inputSchema: { reason: z.string() } },
  async ({ reason }) => ({ content: [{ type: 'text', text: `failed: ${reason}` }], isError: true }),
);
await server.connect(new StdioServerTransport());
