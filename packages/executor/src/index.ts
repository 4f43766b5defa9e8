/**
 * @agentflow/executor: the tool registry and the tools of the AgentFlow loop.
 * @packageDocumentation
 */

/** The tool registry: lookup, input validation, per-call timeout and output limit. */
export {
  createToolRegistry,
  type ToolDescription,
  type ToolExecutionContext,
  type ToolRegistry,
  type ToolRegistrySettings,
} from './registry/tool-registry';
/** JSON schema helpers shared by the registry, the planner catalogue and MCP. */
export { coerceToolInput, toolInputJsonSchema, type JsonSchema, type JsonSchemaTool } from './registry/input-schema';
/** Cuts a long text in the middle to a character budget. */
export { truncateMiddle } from './registry/truncate';
/** The sandboxed Python REPL tool. */
export { createPythonTool, pythonInputSchema, type PythonInput, type PythonTool } from './python/python-tool';
/** Settings of the python tool (zod schema with documented defaults). */
export { pythonToolSettingsSchema, type PythonToolSettings } from './python/python-settings';
/** What killed processes left (scratch mounts, control groups); the Python tool runs these when it starts. */
export { processAlive, reapStaleCgroups, reapStaleScratchFolders, type ReapReport } from './python/stale-sandboxes';
/** BM25 search over a local corpus (JSONL file or array), offline. */
export {
  corpusDocumentSchema,
  createCorpusSearchTool,
  loadCorpus,
  type CorpusDocument,
  type CorpusSearchToolSettings,
} from './search/corpus-search-tool';
/** The BM25 index behind corpus_search, usable on its own. */
export { createBm25Index, tokenize, type Bm25Hit, type Bm25Index, type Bm25Settings } from './search/bm25-index';
/** Input schema shared by the search tools: `{ query, k? }`. */
export { searchInputSchema, type SearchInput } from './search/search-input';
/** Web search through the Tavily API. */
export { createWebSearchTool, type WebSearchToolSettings } from './search/web-search-tool';
/** Wikipedia search + article intros through the MediaWiki action API. */
export { createWikipediaTool, type WikipediaToolSettings } from './search/wikipedia-tool';
/** Serves a registry over MCP. */
export { createMcpServer, type McpServerHandle, type McpServerSettings } from './mcp/mcp-server';
/** Joins the tools of an external MCP server (stdio or Streamable HTTP). */
export {
  connectMcpTools,
  type ConnectMcpToolsSettings,
  type McpServerTarget,
  type McpServerInfo,
  type McpToolConnection,
} from './mcp/connect-mcp-tools';
/** MCP servers as users write them: `[NAME=]COMMAND [ARG...]` (stdio) or `[NAME=]http(s)://...`. */
export {
  formatMcpServerSpec,
  parseMcpCommandSpec,
  parseMcpServerSpec,
  parseMcpUrlSpec,
  type McpServerSpec,
  type McpServerSpecSettings,
} from './mcp/mcp-server-spec';
/** Splits a command line as POSIX sh does, refusing what only a shell would expand. */
export { splitCommandLine, type CommandLineWordsSettings } from './mcp/command-line-words';
/** Connects several MCP servers side by side, their tools named `SERVER__TOOL`. */
export {
  connectMcpServers,
  MCP_TOOL_SEPARATOR,
  type ConnectMcpServersSettings,
  type McpServerConnection,
} from './mcp/connect-mcp-servers';
/** An agent's tools in one call: the built-in tools asked for and the MCP servers' tools, collisions refused. */
export { createToolSet, type ToolSet, type ToolSetLabels, type ToolSetSettings } from './tool-set/create-tool-set';
/** A run config's `tools` block (web search, Wikipedia, MCP servers) and the tool set it names. */
export { createConfiguredToolSet, type ToolsConfig, toolsConfigSchema } from './tool-set/tools-config';
/** Refuses two tool sources offering one name, naming both. */
export { assertDistinctToolNames, type ToolSource } from './tool-set/distinct-tool-names';
/** Parses an http(s) URL, naming the option it came from when it is not one. */
export { parseHttpUrl, type HttpUrlSettings } from './tool-set/http-url';
/** Serves a registry over stdio until the client closes it (what `agentflow mcp` runs). */
export { serveMcpOverStdio, type ServeMcpStdioSettings } from './mcp/serve-mcp-stdio';
