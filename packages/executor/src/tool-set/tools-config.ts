import { AgentFlowError } from '@agentflow/core';
import { z } from 'zod';
import { parseMcpServerSpec } from '../mcp/mcp-server-spec';
import { createToolSet, type ToolSet, type ToolSetSettings } from './create-tool-set';

/**
 * A run config's `tools` block: the tools an agent gets beside its task source's own (web
 * search, Wikipedia, MCP servers), each off by default. {@link createConfiguredToolSet} builds them.
 */
export const toolsConfigSchema = z
  .object({
    webSearch: z
      .object({
        apiKeyEnv: z.string().min(1).default('TAVILY_API_KEY').describe('Environment variable holding the Tavily API key.'),
        baseUrl: z.string().url().optional().describe('Tavily API root (default https://api.tavily.com).'),
      })
      .strict()
      .nullable()
      .default(null)
      .describe('web_search (Tavily) for every run of the agent; null: none. It reaches the network.'),
    wikipedia: z
      .object({ baseUrl: z.string().url().optional().describe('MediaWiki action API (default en.wikipedia.org).') })
      .strict()
      .nullable()
      .default(null)
      .describe('wikipedia search for every run of the agent; null: none. It reaches the network.'),
    mcp: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'MCP servers whose tools join the task source\'s, as `agentflow solve --mcp` takes them: "[NAME=]COMMAND ARGS" (stdio, split as a shell splits, no shell) or "[NAME=]http(s)://..." (Streamable HTTP). Their tools are named SERVER__TOOL.',
      ),
  })
  .strict()
  .prefault({})
  .describe("Tools beside the task source's own (python, the world's corpus search); a name offered twice is refused.");
export type ToolsConfig = z.output<typeof toolsConfigSchema>;

/**
 * The tools a {@link toolsConfigSchema} block names, started (MCP servers) and checked: a web
 * search whose key variable is unset is INVALID_CONFIG naming it, and a name also offered
 * `alongside` (a task source's tools) is refused as {@link createToolSet} refuses collisions.
 * Messages name the block's keys under `prefix` (default `tools`).
 */
export async function createConfiguredToolSet(
  config: ToolsConfig,
  settings: Pick<ToolSetSettings, 'alongside' | 'warn' | 'signal'> & { prefix?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ToolSet> {
  const { webSearch, wikipedia, mcp } = config;
  const prefix = settings.prefix ?? 'tools';
  const env = settings.env ?? process.env;
  if (webSearch && !env[webSearch.apiKeyEnv]) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `${prefix}.webSearch: the environment variable ${webSearch.apiKeyEnv} (apiKeyEnv) is not set; export the Tavily API key there, or set ${prefix}.webSearch: null.`,
    });
  }
  return createToolSet({
    ...(webSearch ? { webSearch: { apiKeyEnv: webSearch.apiKeyEnv, ...(webSearch.baseUrl ? { baseUrl: webSearch.baseUrl } : {}) } } : {}),
    ...(wikipedia ? { wikipedia: wikipedia.baseUrl ? { baseUrl: wikipedia.baseUrl } : {} } : {}),
    mcpServers: mcp.map((text) => parseMcpServerSpec(text, { option: `${prefix}.mcp` })),
    labels: { webSearch: `${prefix}.webSearch`, wikipedia: `${prefix}.wikipedia` },
    ...(settings.warn ? { warn: settings.warn } : {}),
    ...(settings.alongside ? { alongside: settings.alongside } : {}),
    ...(settings.signal ? { signal: settings.signal } : {}),
  });
}
