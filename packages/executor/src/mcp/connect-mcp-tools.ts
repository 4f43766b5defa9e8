import { AgentFlowError, type ToolContext, type ToolResult, assertNever } from '@agentflow/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';
import type { JsonSchema, JsonSchemaTool } from '../registry/input-schema';
import { loadMcpClientSdk } from './load-mcp-sdk';

type McpClientSdk = ReturnType<typeof loadMcpClientSdk>;

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
  /**
   * Prepended to every tool name (e.g. `files_`), to keep names of several servers apart; a
   * function gets what the server announced, e.g. `(server) => server.name + '__'`.
   */
  prefix?: string | ((server: McpServerInfo) => string);
  /** Only these tools of the server (by their own names); default all. */
  include?: string[];
  /** Cancels connecting and listing; the connection is closed (a stdio server stopped) and ABORTED thrown. */
  signal?: AbortSignal;
}

/** What a server announced about itself in its `initialize` reply (`serverInfo`). */
export interface McpServerInfo {
  name: string;
  version: string;
}

export interface McpToolConnection {
  /** Tools of the server as core Tools, ready for `registry.register(...tools)`. */
  tools: JsonSchemaTool<Record<string, unknown>>[];
  /** The server's own name and version, e.g. to prefix its tools with. */
  server: McpServerInfo;
  /**
   * Ends the connection; for a stdio target, resolves once the server process has exited
   * (stdin closed, then SIGTERM after 2 s and SIGKILL after 4 s, as the SDK escalates).
   */
  close(): Promise<void>;
}

/** Characters of a stdio server's stderr kept for error messages. */
const STDERR_TAIL_CHARS = 2_000;
/** How long close() waits for a server's exit: past the SDK's SIGKILL at 4 s. */
const CLOSE_WAIT_MS = 5_000;

/**
 * Connects to an MCP server (stdio command or Streamable HTTP URL) and wraps its tools.
 * A failure to start, connect or list closes what was opened and names the server; for
 * a stdio server the message ends with the last lines it wrote to stderr.
 */
export async function connectMcpTools(settings: ConnectMcpToolsSettings): Promise<McpToolConnection> {
  const target = settings.transport;
  const where = target.type === 'stdio' ? `${target.command} ${(target.args ?? []).join(' ')}`.trim() : target.url;
  if (settings.signal?.aborted) {
    throw new AgentFlowError({ code: 'ABORTED', message: `Connecting to the MCP server ${where} was cancelled.`, details: { target: where } });
  }
  const sdk = loadMcpClientSdk('connectMcpTools');
  const client = new sdk.Client({ name: 'agentflow', version: '0.1.0' });
  // Settles when the transport has closed: for stdio, when the server process has exited.
  const closed = new Promise<void>((resolve) => {
    client.onclose = resolve;
  });
  const close = async (): Promise<void> => {
    await client.close().catch(() => undefined);
    // The SDK ends a failed connect with a close of its own, and a second close returns at
    // once while the first still waits for the exit: wait for the exit itself.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
  };
  const transport = createTransport(sdk, target);
  // Always drained: a stdio server blocks once its stderr pipe is full.
  let stderrTail = '';
  if (transport instanceof sdk.StdioClientTransport) {
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderrTail = `${stderrTail}${chunk.toString('utf8')}`.slice(-STDERR_TAIL_CHARS);
    });
  }
  const fail = async (phase: 'connect' | 'list', cause: unknown): Promise<never> => {
    await close();
    // The last stderr chunks of an exited server arrive just after its stdout closes.
    await new Promise((resolve) => setImmediate(resolve));
    const doing = phase === 'connect' ? 'Connecting to' : 'Listing the tools of';
    if (settings.signal?.aborted) {
      throw new AgentFlowError({ code: 'ABORTED', message: `${doing} the MCP server ${where} was cancelled.`, cause, details: { target: where } });
    }
    const failed = phase === 'connect' ? 'Could not connect to' : 'Could not list the tools of';
    const reason = (cause as Error).message;
    const stderr = stderrTail.trim() === '' ? '' : `${/[.!?]$/.test(reason) ? '' : '.'} Its stderr ended with:\n${stderrTail.trimEnd()}`;
    throw new AgentFlowError({
      code: 'NETWORK_ERROR',
      message: `${failed} the MCP server ${where}: ${reason}${stderr}`,
      cause,
      details: { target: where },
    });
  };
  const request = settings.signal ? { signal: settings.signal } : {};
  try {
    await client.connect(transport, request);
  } catch (cause) {
    return fail('connect', cause);
  }
  const listed: Array<{ name: string; description?: string; inputSchema: JsonSchema }> = [];
  try {
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, request);
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
  } catch (cause) {
    return fail('list', cause);
  }

  const announced = client.getServerVersion();
  const server = { name: announced?.name ?? '', version: announced?.version ?? '' };
  const prefix = typeof settings.prefix === 'function' ? settings.prefix(server) : (settings.prefix ?? '');
  const tools = listed
    .filter((tool) => settings.include === undefined || settings.include.includes(tool.name))
    .map((tool) => wrapTool(client, tool, toolNameOf(`${prefix}${tool.name}`), where));
  return { tools, server, close };
}

/** A text as a tool name: characters outside the planner's name alphabet (`A-Za-z0-9_.-`) become `_`. */
export function toolNameOf(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]/g, '_');
}

function createTransport(sdk: McpClientSdk, target: McpServerTarget): Transport {
  switch (target.type) {
    case 'stdio':
      return new sdk.StdioClientTransport({
        command: target.command,
        args: target.args ?? [],
        env: { ...sdk.getDefaultEnvironment(), ...target.env },
        ...(target.cwd === undefined ? {} : { cwd: target.cwd }),
        stderr: 'pipe',
      });
    case 'http':
      return new sdk.StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: target.headers ?? {} } });
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
