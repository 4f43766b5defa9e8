import type { Tool, ToolContext, ToolResult } from '@agentflow/core';
import { z } from 'zod';
import { DEFAULT_SEARCH_RESPONSE_BYTES, type FetchFunction, errorMessage, fetchJson } from './fetch-json';
import { type SearchInput, searchInputSchema } from './search-input';
import { startToolResult } from './timed-result';

export interface WebSearchToolSettings {
  /** Name of the environment variable holding the Tavily API key. Default `TAVILY_API_KEY`. */
  apiKeyEnv?: string;
  /** Where the key is looked up; default `process.env` (read at each call). */
  environment?: Record<string, string | undefined>;
  /** Tavily API root. Default `https://api.tavily.com` (docs.tavily.com, "Tavily Search"). */
  baseUrl?: string;
  fetch?: FetchFunction;
  /** `basic` (1 credit) or `advanced` (2 credits). Default `basic`. */
  searchDepth?: 'basic' | 'advanced';
  /** Ask Tavily for a short generated answer besides the results. Default true. */
  includeAnswer?: boolean;
  /** Characters of each result's content shown. Default 500. */
  maxContentChars?: number;
  /** Bytes of Tavily's reply read at most; a larger one fails the call naming this setting. Default 2 MiB. */
  maxResponseBytes?: number;
}

/** The part of Tavily's documented response that the tool reads. */
const tavilyResponseSchema = z.object({
  answer: z.string().nullish(),
  results: z.array(
    z.object({
      title: z.string().default(''),
      url: z.string().default(''),
      content: z.string().default(''),
      score: z.number().optional(),
    }),
  ),
});

/** Creates `web_search`: Tavily's search API (POST /search). Without a key, every call says so. */
export function createWebSearchTool(settings: WebSearchToolSettings = {}): Tool<SearchInput> {
  const apiKeyEnv = settings.apiKeyEnv ?? 'TAVILY_API_KEY';
  const baseUrl = (settings.baseUrl ?? 'https://api.tavily.com').replace(/\/+$/, '');
  const maxContentChars = settings.maxContentChars ?? 500;
  return {
    name: 'web_search',
    description: 'Searches the web (Tavily) and returns the top results with a snippet each, plus a short answer when available.',
    inputSchema: searchInputSchema,
    async execute(input: SearchInput, context: ToolContext): Promise<ToolResult> {
      const done = startToolResult();
      const apiKey = (settings.environment ?? process.env)[apiKeyEnv];
      if (!apiKey) {
        return done('', `web_search is not configured: set the environment variable ${apiKeyEnv} to a Tavily API key (https://tavily.com).`);
      }
      try {
        const body = await fetchJson(settings.fetch ?? fetch, `${baseUrl}/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
          body: JSON.stringify({
            query: input.query,
            max_results: input.k ?? 5,
            search_depth: settings.searchDepth ?? 'basic',
            include_answer: settings.includeAnswer ?? true,
          }),
          signal: context.signal,
        }, { maxBytes: settings.maxResponseBytes ?? DEFAULT_SEARCH_RESPONSE_BYTES, setting: "the web_search tool's maxResponseBytes" });
        const parsed = tavilyResponseSchema.safeParse(body);
        if (!parsed.success) return done('', `Tavily answered in an unexpected shape: ${JSON.stringify(body).slice(0, 200)}`);
        const lines: string[] = [];
        if (parsed.data.answer) lines.push(`Answer: ${parsed.data.answer}`, '');
        parsed.data.results.forEach((result, rank) => {
          const content = result.content.length > maxContentChars ? `${result.content.slice(0, maxContentChars)}...` : result.content;
          lines.push(`[${rank + 1}] ${result.title} (${result.url})`, content, '');
        });
        if (parsed.data.results.length === 0) lines.push(`No web results for ${JSON.stringify(input.query)}.`);
        return done(lines.join('\n').trimEnd());
      } catch (error) {
        return done('', `web_search failed: ${errorMessage(error)}`);
      }
    },
  };
}
