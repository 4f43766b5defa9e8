import { AgentFlowError, type Tool } from '@agentflow/core';

/** Where some of an agent's tools come from: a built-in tool, one MCP server, a task source. */
export interface ToolSource {
  /** Names the source in messages, e.g. `python` or `--mcp "node vault.mjs" (server "vault")`. */
  label: string;
  /** How to tell this source apart when its names collide, completing "To keep both, ...": `leave out python`. */
  remedy: string;
  tools: readonly Pick<Tool, 'name'>[];
}

/**
 * Refuses two sources offering the same tool name (which one the planner calls would
 * otherwise depend on the order): an INVALID_ARGUMENT naming the tool, both sources and the
 * second one's remedy.
 */
export function assertDistinctToolNames(sources: readonly ToolSource[]): void {
  const owners = new Map<string, ToolSource>();
  for (const source of sources) {
    for (const tool of source.tools) {
      const first = owners.get(tool.name);
      if (first !== undefined) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Two sources offer a tool named ${JSON.stringify(tool.name)}: ${first.label} and ${source.label}. To keep both, ${source.remedy}.`,
          details: { tool: tool.name, sources: [first.label, source.label] },
        });
      }
      owners.set(tool.name, source);
    }
  }
}
