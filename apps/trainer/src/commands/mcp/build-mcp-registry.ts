import {
  type ToolRegistry,
  createCorpusSearchTool,
  createPythonTool,
  createToolRegistry,
  createWebSearchTool,
  createWikipediaTool,
} from '@agentflow/executor';
import type { Tool } from '@agentflow/core';

export interface McpCommandOptions {
  corpus?: string;
  python: boolean;
  offline?: boolean;
  tavilyKeyEnv: string;
  wikipediaUrl?: string;
}

/** The registry `agentflow mcp` serves, and warnings for stderr (a tool that cannot run here). */
export async function buildMcpRegistry(options: McpCommandOptions): Promise<{ registry: ToolRegistry; warnings: string[] }> {
  const tools: Tool<unknown>[] = [];
  const warnings: string[] = [];
  if (options.python) {
    const python = createPythonTool();
    const reason = await python.unavailableReason();
    // Kept in the list even then: a client calling it gets the same clear error.
    if (reason) warnings.push(`python: ${reason}`);
    tools.push(python as Tool<unknown>);
  }
  if (options.corpus) tools.push(createCorpusSearchTool({ path: options.corpus }) as Tool<unknown>);
  if (!options.offline) {
    tools.push(createWebSearchTool({ apiKeyEnv: options.tavilyKeyEnv }) as Tool<unknown>);
    if (!process.env[options.tavilyKeyEnv]) warnings.push(`web_search: ${options.tavilyKeyEnv} is not set; calls will say so.`);
    tools.push(createWikipediaTool(options.wikipediaUrl ? { baseUrl: options.wikipediaUrl } : {}) as Tool<unknown>);
  }
  return { registry: createToolRegistry({ tools }), warnings };
}
