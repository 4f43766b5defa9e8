import { AgentFlowError, type ToolContext, type ToolResult, assertNever } from '@agentflow/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';
import type { JsonSchema, JsonSchemaTool } from '../registry/input-schema';

/** How to reach an MCP server. */
export type McpServerTarget =
  | {
      type: 'stdio';
      command: string;
      args?: string[];
      /** Added to the SDK's minimal default environment (PATH, HOME, ...), not the whole host env. */
      env?: Record<string, string>;
      cwd?: string;
    }
  | { type: 'http'; url: string; headers?: Record<string, string> };

export interface ConnectMcpToolsSettings {
  transport: McpServerTarget;
  /** Prepended to every tool name (e.g. `files_`), to keep names of several servers apart. */
  prefix?: string;
  /** Only these tools of the server (by their own names); default all. */
  include?: string[];
}

export interface McpToolConnection {
  /** Tools of the server as core Tools, ready for `registry.register(...tools)`. */
  tools: JsonSchemaTool<Record<string, unknown>>[];
  /** Ends the connection (and the server process of a stdio target). */
  close(): Promise<void>;
}

/** Connects to an MCP server (stdio command or Streamable HTTP URL) and wraps its tools. */
export async function connectMcpTools(settings: ConnectMcpToolsSettings): Promise<McpToolConnection> {
  const target = settings.transport;
  const client = new Client({ name: 'agentflow', version: '0.1.0' });
  const transport = createTransport(target);
  const where = target.type === 'stdio' ? `${target.command} ${(target.args ?? []).join(' ')}`.trim() : target.url;
  try {
    await client.connect(transport);
  } catch (cause) {
    await client.close().catch(() => undefined);
    throw new AgentFlowError({
      code: 'NETWORK_ERROR',
      message: `Could not connect to the MCP server ${where}: ${(cause as Error).message}`,
      cause,
      details: { target: where },
    });
  }
  const listed: Array<{ name: string; description?: string; inputSchema: JsonSchema }> = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    listed.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);

  const tools = listed
    .filter((tool) => settings.include === undefined || settings.include.includes(tool.name))
    .map((tool) => wrapTool(client, tool, `${settings.prefix ?? ''}${tool.name}`.replace(/[^A-Za-z0-9_.-]/g, '_'), where));
  return { tools, close: () => client.close() };
}

function createTransport(target: McpServerTarget): Transport {
  switch (target.type) {
    case 'stdio':
      return new StdioClientTransport({
        command: target.command,
        args: target.args ?? [],
        env: { ...getDefaultEnvironment(), ...target.env },
        ...(target.cwd === undefined ? {} : { cwd: target.cwd }),
        stderr: 'pipe',
      });
    case 'http':
      return new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: target.headers ?? {} } });
    default:
      return assertNever(target, 'MCP transport');
  }
}

function wrapTool(
  client: Client,
  tool: { name: string; description?: string; inputSchema: JsonSchema },
  name: string,
  where: string,
): JsonSchemaTool<Record<string, unknown>> {
  return {
    name,
    description: tool.description ?? `Tool ${tool.name} of the MCP server ${where}.`,
    inputSchema: zodFromJsonSchema(tool.inputSchema),
    inputJsonSchema: tool.inputSchema,
    async execute(input: Record<string, unknown>, context: ToolContext): Promise<ToolResult> {
      const started = performance.now();
      const result = await client.callTool({ name: tool.name, arguments: input }, undefined, { signal: context.signal });
      const texts = ((result.content ?? []) as Array<{ type: string; text?: string; resource?: { text?: string; uri?: string } }>).map(
        (item) => {
          if (item.type === 'text') return item.text ?? '';
          if (item.type === 'resource') return item.resource?.text ?? `[resource ${item.resource?.uri ?? ''}]`;
          return `[${item.type} content]`;
        },
      );
      const output = texts.join('\n');
      const durationMs = performance.now() - started;
      if (result.isError === true) return { output: '', error: output || `MCP tool ${tool.name} failed.`, truncated: false, durationMs };
      return { output, truncated: false, durationMs };
    },
  };
}

/** Validates with the server's JSON schema where zod can express it; otherwise any object. */
function zodFromJsonSchema(schema: JsonSchema): z.ZodType<Record<string, unknown>> {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<Record<string, unknown>>;
  } catch {
    return z.record(z.string(), z.unknown());
  }
}
