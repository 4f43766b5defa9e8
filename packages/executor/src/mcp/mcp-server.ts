import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRegistry } from '../registry/tool-registry';
import { loadMcpServerSdk } from './load-mcp-sdk';

export interface McpServerSettings {
  /** Server name announced to clients. Default `agentflow`. */
  name?: string;
  version?: string;
  /**
   * Task id for the registry's per-task state: one MCP connection is one task, so the
   * Python REPL keeps its variables across the calls of a client. Default `mcp`.
   */
  taskId?: string;
}

/**
 * The MCP SDK `Server` that {@link createMcpServer} returns, described here so that these
 * types need no optional peer installed (cast to the SDK's `Server` for the rest of it).
 */
export interface McpServerHandle {
  /** Starts serving on an SDK transport (e.g. `StdioServerTransport`, `StreamableHTTPServerTransport`). */
  connect(transport: object): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
}

/**
 * Serves a tool registry over MCP: `tools/list` shows the catalogue (JSON schemas of the
 * inputs), `tools/call` runs the registry (errors come back with `isError: true`, never
 * as protocol failures). Connect it to any SDK transport, e.g. `StdioServerTransport`.
 * Needs the optional peer `@modelcontextprotocol/sdk` (MISSING_DEPENDENCY without it).
 */
export function createMcpServer(registry: ToolRegistry, settings: McpServerSettings = {}): McpServerHandle {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema } = loadMcpServerSdk('createMcpServer');
  // The low-level Server, because the registry's schemas are JSON schemas already
  // (external MCP tools have no zod schema), which McpServer.registerTool cannot take.
  const server = new Server({ name: settings.name ?? 'agentflow', version: settings.version ?? '0.1.0' }, { capabilities: { tools: {} } });
  const taskId = settings.taskId ?? 'mcp';

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: registry.catalogue().map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: { ...tool.inputSchema, type: 'object' as const },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const result = await registry.execute(
      { tool: request.params.name, input: request.params.arguments ?? {} },
      { taskId, signal: extra.signal },
    );
    const content: CallToolResult['content'] = [];
    if (result.output !== '' || result.error === undefined) content.push({ type: 'text', text: result.output });
    if (result.error !== undefined) content.push({ type: 'text', text: `Error: ${result.error}` });
    return { content, isError: result.error !== undefined, _meta: { truncated: result.truncated, durationMs: result.durationMs } };
  });

  server.onclose = () => {
    void registry.dispose(taskId);
  };
  return server;
}
