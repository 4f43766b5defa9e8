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
/** Serves a registry over stdio until the client closes it (what `agentflow mcp` runs). */
export { serveMcpOverStdio, type ServeMcpStdioSettings } from './mcp/serve-mcp-stdio';
