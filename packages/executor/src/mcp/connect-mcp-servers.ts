import { AgentFlowError, type Tool } from '@agentflow/core';
import { connectMcpTools, type McpServerInfo, toolNameOf } from './connect-mcp-tools';
import { formatMcpServerSpec, type McpServerSpec } from './mcp-server-spec';

/** Between the server's name and its own tool name: `vault__secret_number`. */
export const MCP_TOOL_SEPARATOR = '__';

export interface ConnectMcpServersSettings {
  /** Cancels starting and listing; every server is closed and ABORTED thrown. */
  signal?: AbortSignal;
}

/** A connected MCP server, its tools named `<name>__<tool>`. */
export interface McpServerConnection {
  spec: McpServerSpec;
  /** What prefixes its tools: the spec's `NAME=`, else the name the server announced (`mcp` when it announced none). */
  name: string;
  /** What the server announced about itself. */
  server: McpServerInfo;
  tools: Tool[];
  /** Ends the connection; a stdio server has exited when it resolves. */
  close(): Promise<void>;
}

/** A server name as a tool-name prefix: the planner's name alphabet, never empty. */
function prefixOf(spec: McpServerSpec, server: McpServerInfo): string {
  return toolNameOf(spec.name ?? server.name) || 'mcp';
}

/**
 * Starts (stdio) or reaches (HTTP) every server side by side and lists its tools, named
 * `SERVER__TOOL`. When any of them fails, the others are closed before the first failure is
 * thrown, its message starting with the spec (`--mcp "node vault.js": Could not connect ...`)
 * and its code the cause's (NETWORK_ERROR, ABORTED).
 */
export async function connectMcpServers(specs: readonly McpServerSpec[], settings: ConnectMcpServersSettings = {}): Promise<McpServerConnection[]> {
  const { signal } = settings;
  const settled = await Promise.allSettled(
    specs.map((spec) =>
      connectMcpTools({
        transport: spec.target,
        prefix: (server) => `${prefixOf(spec, server)}${MCP_TOOL_SEPARATOR}`,
        ...(signal ? { signal } : {}),
      }),
    ),
  );
  const failed = settled.findIndex((result) => result.status === 'rejected');
  if (failed >= 0) {
    await Promise.allSettled(settled.map((result) => (result.status === 'fulfilled' ? result.value.close() : undefined)));
    const cause = (settled[failed] as PromiseRejectedResult).reason as unknown;
    throw new AgentFlowError({
      code: AgentFlowError.isInstance(cause) ? cause.code : 'NETWORK_ERROR',
      message: `${formatMcpServerSpec(specs[failed]!)}: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause,
      details: { option: specs[failed]!.option, value: specs[failed]!.spec },
    });
  }
  return settled.map((result, index) => {
    const connection = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof connectMcpTools>>>).value;
    const spec = specs[index]!;
    return {
      spec,
      name: prefixOf(spec, connection.server),
      server: connection.server,
      tools: connection.tools as Tool[],
      close: connection.close,
    };
  });
}
