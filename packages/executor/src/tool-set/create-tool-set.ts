import type { Tool } from '@agentflow/core';
import { connectMcpServers, MCP_TOOL_SEPARATOR, type McpServerConnection } from '../mcp/connect-mcp-servers';
import { formatMcpServerSpec, type McpServerSpec } from '../mcp/mcp-server-spec';
import { createPythonTool } from '../python/python-tool';
import type { PythonToolSettings } from '../python/python-settings';
import { type CorpusSearchToolSettings, createCorpusSearchTool } from '../search/corpus-search-tool';
import { createWebSearchTool, type WebSearchToolSettings } from '../search/web-search-tool';
import { createWikipediaTool, type WikipediaToolSettings } from '../search/wikipedia-tool';
import { assertDistinctToolNames, type ToolSource } from './distinct-tool-names';

/** How collision messages name each built-in tool (the remedy reads `leave out <label>`). */
export interface ToolSetLabels {
  /** Default `python`. */
  python?: string;
  /** Default `corpus_search`. */
  corpus?: string;
  /** Default `web_search`. */
  webSearch?: string;
  /** Default `wikipedia`. */
  wikipedia?: string;
}

export interface ToolSetSettings {
  /** The sandboxed python tool, `true` for its defaults; left out, with a note to `warn`, where it cannot run (no bwrap). Default: none. */
  python?: boolean | PythonToolSettings;
  /** corpus_search over a JSONL file (`{ path }`) or documents. Default: none. */
  corpus?: CorpusSearchToolSettings;
  /** web_search (Tavily); the key is read from `apiKeyEnv` at each call (check it up front if it must be there). Default: none. */
  webSearch?: WebSearchToolSettings;
  /** wikipedia (MediaWiki action API), default endpoint en.wikipedia.org. Default: none. */
  wikipedia?: WikipediaToolSettings;
  /** MCP servers ({@link parseMcpServerSpec}) whose tools join, named `SERVER__TOOL`. Default: none. */
  mcpServers?: readonly McpServerSpec[];
  /** Names of the built-in tools in collision messages, e.g. the flags that add them. */
  labels?: ToolSetLabels;
  /** Tools offered beside these (a task source's): a name among them is refused like any other collision. */
  alongside?: readonly ToolSource[];
  /** Cancels starting the MCP servers (ABORTED, every server closed). */
  signal?: AbortSignal;
  /** Where notes about unavailable tools go, one line each. Default: standard error. */
  warn?: (text: string) => void;
}

export interface ToolSet {
  /** In catalogue order: python, corpus_search, web_search, wikipedia, then each server's tools in the order given. */
  tools: Tool[];
  /** The MCP servers, in the order given. */
  servers: McpServerConnection[];
  /** Disposes the tools and closes the MCP servers (stdio ones have exited when it resolves). */
  close(): Promise<void>;
}

/** A `NAME=` for a server whose tools collide: its name in the spec's alphabet, then `2`. */
function otherName(server: McpServerConnection): string {
  return `${server.name.toLowerCase().replace(/[^a-z0-9_-]/g, '_').replace(/^[^a-z]+/, '') || 'server'}2`;
}

/**
 * The tools of an agent assembled in one place: the built-in tools asked for, then the tools
 * of each MCP server (started side by side). Two sources offering one name (`alongside`
 * included) are refused with an INVALID_ARGUMENT naming the tool, both sources and a remedy
 * (a `NAME=` for a server), after closing what was started: never shadowed. A server that
 * fails closes the others and throws, naming its spec.
 */
export async function createToolSet(settings: ToolSetSettings): Promise<ToolSet> {
  const labels = settings.labels ?? {};
  const warn = settings.warn ?? ((text: string) => void process.stderr.write(text));
  const sources: ToolSource[] = [...(settings.alongside ?? [])];
  const builtInTools: Tool[] = [];
  const disposeBuiltIns = () => Promise.allSettled(builtInTools.map((tool) => tool.dispose?.()));
  const builtIn = (label: string, tool: Tool) => {
    builtInTools.push(tool);
    sources.push({ label, remedy: `leave out ${label}`, tools: [tool] });
  };
  try {
    if (settings.python !== undefined && settings.python !== false) {
      const python = createPythonTool(settings.python === true ? {} : settings.python);
      const reason = await python.unavailableReason();
      if (reason) warn(`note: the python tool is unavailable here: ${reason}\n`);
      else builtIn(labels.python ?? 'python', python as Tool);
    }
    if (settings.corpus) builtIn(labels.corpus ?? 'corpus_search', createCorpusSearchTool(settings.corpus) as Tool);
    if (settings.webSearch) builtIn(labels.webSearch ?? 'web_search', createWebSearchTool(settings.webSearch) as Tool);
    if (settings.wikipedia) builtIn(labels.wikipedia ?? 'wikipedia', createWikipediaTool(settings.wikipedia) as Tool);
  } catch (error) {
    await disposeBuiltIns();
    throw error;
  }

  let servers: McpServerConnection[];
  try {
    servers = await connectMcpServers(settings.mcpServers ?? [], settings.signal ? { signal: settings.signal } : {});
  } catch (error) {
    await disposeBuiltIns();
    throw error;
  }
  const close = async () => {
    await Promise.allSettled([disposeBuiltIns(), ...servers.map((server) => server.close())]);
  };
  for (const server of servers) {
    const other = otherName(server);
    sources.push({
      label: `${formatMcpServerSpec(server.spec)} (server ${JSON.stringify(server.name)})`,
      remedy: `name that server apart: ${formatMcpServerSpec({ ...server.spec, name: other })} gives its tools the prefix ${other}${MCP_TOOL_SEPARATOR}`,
      tools: server.tools,
    });
  }
  try {
    assertDistinctToolNames(sources);
  } catch (error) {
    await close();
    throw error;
  }
  return { tools: [...builtInTools, ...servers.flatMap((server) => server.tools)], servers, close };
}
