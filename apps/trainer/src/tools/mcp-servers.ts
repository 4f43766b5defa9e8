import { AgentFlowError, type Tool } from '@agentflow/core';
import { connectMcpTools } from '@agentflow/executor';
import { formatMcpServerFlag, type McpServerFlag } from './mcp-server-flag';

/** Between the server's name and its own tool name: `vault__secret_number`. */
export const MCP_TOOL_SEPARATOR = '__';

/** A connected MCP server of `agentflow solve`, its tools renamed `<name>__<tool>`. */
export interface McpServerConnection {
  flag: McpServerFlag;
  /** What prefixes its tools: the `NAME=` of the flag, else the name the server announced. */
  name: string;
  tools: Tool[];
  /** Ends the connection; a stdio server has exited when it resolves. */
  close(): Promise<void>;
}

/** A server name as a tool-name prefix: the planner's name alphabet, never empty. */
function prefixOf(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_.-]/g, '_');
  return cleaned === '' ? 'mcp' : cleaned;
}

/**
 * Starts (stdio) or reaches (HTTP) every server side by side and lists its tools. When any
 * of them fails, the others are closed before the first failure is thrown, naming its flag.
 */
export async function connectMcpServers(flags: readonly McpServerFlag[], signal?: AbortSignal): Promise<McpServerConnection[]> {
  const settled = await Promise.allSettled(
    flags.map((flag) => connectMcpTools({ transport: flag.target, ...(signal ? { signal } : {}) })),
  );
  const failed = settled.findIndex((result) => result.status === 'rejected');
  if (failed >= 0) {
    await Promise.allSettled(settled.map((result) => (result.status === 'fulfilled' ? result.value.close() : undefined)));
    const cause = (settled[failed] as PromiseRejectedResult).reason as unknown;
    throw new AgentFlowError({
      code: AgentFlowError.isInstance(cause) ? cause.code : 'NETWORK_ERROR',
      message: `${formatMcpServerFlag(flags[failed]!)}: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause,
      details: { option: flags[failed]!.option, value: flags[failed]!.spec },
    });
  }
  return settled.map((result, index) => {
    const connection = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof connectMcpTools>>>).value;
    const flag = flags[index]!;
    const name = prefixOf(flag.name ?? connection.server.name);
    return {
      flag,
      name,
      tools: connection.tools.map((tool) => ({ ...tool, name: `${name}${MCP_TOOL_SEPARATOR}${tool.name}` }) as Tool),
      close: connection.close,
    };
  });
}
