import type { Tool } from '@agentflow/core';
import { createCorpusSearchTool, createPythonTool, createWebSearchTool, createWikipediaTool } from '@agentflow/executor';
import { assertDistinctToolNames, type ToolSource } from './distinct-tool-names';
import { formatMcpServerFlag, type McpServerFlag } from './mcp-server-flag';
import { connectMcpServers, MCP_TOOL_SEPARATOR } from './mcp-servers';

export interface AgentToolsSettings {
  /** The sandboxed python tool (skipped, with a note, where it cannot run). */
  python: boolean;
  /** A JSONL corpus (`{id, title, text}` per line) for the corpus_search tool. */
  corpus?: string;
  /** web_search (Tavily): the variable holding the key (checked by the caller), the API root. */
  webSearch?: { apiKeyEnv: string; baseUrl?: string };
  /** wikipedia (MediaWiki action API) at `baseUrl`, default en.wikipedia.org. */
  wikipedia?: { baseUrl?: string };
  /** MCP servers whose tools join, named `<server>__<tool>`. */
  mcpServers: readonly McpServerFlag[];
  /** Cancels starting the MCP servers. */
  signal?: AbortSignal;
  /** Where notes about unavailable tools go. */
  warn: (text: string) => void;
  /** Tools already offered beside these (a task source's): a name among them is refused like any other collision. */
  alongside?: ToolSource;
}

export interface AgentTools {
  /** In catalogue order: python, corpus_search, web_search, wikipedia, then each server's tools. */
  tools: Tool[];
  /** Disposes the tools and closes the MCP servers (stdio ones have exited when it resolves). */
  close(): Promise<void>;
}

/**
 * The tools of flags and config beside a task source's (`agentflow solve`, `tools` of a run
 * config), assembled in one place: the executor's built-in tools asked for, then the tools of
 * each MCP server. Two sources offering one name (`alongside` included) are refused (after
 * closing the servers), never shadowed.
 */
export async function createAgentTools(settings: AgentToolsSettings): Promise<AgentTools> {
  const sources: ToolSource[] = settings.alongside ? [settings.alongside] : [];
  const builtInTools: Tool[] = [];
  const disposeBuiltIns = () => Promise.allSettled(builtInTools.map((tool) => tool.dispose?.()));
  const builtIn = (label: string, tool: Tool) => {
    builtInTools.push(tool);
    sources.push({ label, remedy: `leave out ${label}`, tools: [tool] });
  };
  try {
    if (settings.python) {
      const python = createPythonTool();
      const reason = await python.unavailableReason();
      if (reason) settings.warn(`note: the python tool is unavailable here: ${reason}\n`);
      else builtIn('python (built in; --no-python)', python as Tool);
    }
    if (settings.corpus !== undefined) builtIn('--corpus', createCorpusSearchTool({ path: settings.corpus }) as Tool);
    if (settings.webSearch) {
      const { apiKeyEnv, baseUrl } = settings.webSearch;
      builtIn('--web-search', createWebSearchTool({ apiKeyEnv, ...(baseUrl === undefined ? {} : { baseUrl }) }) as Tool);
    }
    if (settings.wikipedia) {
      const { baseUrl } = settings.wikipedia;
      builtIn('--wikipedia', createWikipediaTool(baseUrl === undefined ? {} : { baseUrl }) as Tool);
    }
  } catch (error) {
    await disposeBuiltIns();
    throw error;
  }

  let servers: Awaited<ReturnType<typeof connectMcpServers>>;
  try {
    servers = await connectMcpServers(settings.mcpServers, settings.signal);
  } catch (error) {
    await disposeBuiltIns();
    throw error;
  }
  const close = async () => {
    await Promise.allSettled([disposeBuiltIns(), ...servers.map((server) => server.close())]);
  };
  for (const server of servers) {
    const other = `${server.name.toLowerCase().replace(/[^a-z0-9_-]/g, '_').replace(/^[^a-z]+/, '') || 'server'}2`;
    sources.push({
      label: `${formatMcpServerFlag(server.flag)} (server ${JSON.stringify(server.name)})`,
      remedy: `name that server apart: ${formatMcpServerFlag({ ...server.flag, name: other })} gives its tools the prefix ${other}${MCP_TOOL_SEPARATOR}`,
      tools: server.tools,
    });
  }
  try {
    assertDistinctToolNames(sources);
  } catch (error) {
    await close();
    throw error;
  }
  return { tools: [...builtInTools, ...servers.flatMap((server) => server.tools)], close };
}
