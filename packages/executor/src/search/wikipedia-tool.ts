import type { Tool, ToolContext, ToolResult } from '@agentflow/core';
import { z } from 'zod';
import { DEFAULT_SEARCH_RESPONSE_BYTES, type FetchFunction, errorMessage, fetchJson } from './fetch-json';
import { type SearchInput, searchInputSchema } from './search-input';
import { startToolResult } from './timed-result';

export interface WikipediaToolSettings {
  /** The MediaWiki action API endpoint. Default `https://en.wikipedia.org/w/api.php`. */
  baseUrl?: string;
  fetch?: FetchFunction;
  /** Sent as User-Agent, as the Wikimedia API etiquette asks. */
  userAgent?: string;
  /** Characters of each article's intro shown. Default 1,200. */
  maxExtractChars?: number;
  /** Bytes of the API's reply read at most; a larger one fails the call naming this setting. Default 2 MiB. */
  maxResponseBytes?: number;
}

/** `action=query` with `formatversion=2`: pages as an array. */
const queryResponseSchema = z.object({
  error: z.object({ code: z.string(), info: z.string() }).optional(),
  query: z
    .object({
      pages: z.array(
        z.object({
          pageid: z.number().optional(),
          title: z.string(),
          index: z.number().optional(),
          extract: z.string().optional(),
          fullurl: z.string().optional(),
        }),
      ),
    })
    .optional(),
});

/**
 * Creates `wikipedia`: one MediaWiki request that searches (`generator=search`) and
 * returns the plain-text intro of each hit (`prop=extracts`), in search order.
 */
export function createWikipediaTool(settings: WikipediaToolSettings = {}): Tool<SearchInput> {
  const baseUrl = settings.baseUrl ?? 'https://en.wikipedia.org/w/api.php';
  const maxExtractChars = settings.maxExtractChars ?? 1_200;
  return {
    name: 'wikipedia',
    description: 'Searches Wikipedia and returns the introduction of the best matching articles.',
    inputSchema: searchInputSchema,
    async execute(input: SearchInput, context: ToolContext): Promise<ToolResult> {
      const done = startToolResult();
      const k = input.k ?? 3;
      const url = new URL(baseUrl);
      const parameters: Record<string, string> = {
        action: 'query',
        format: 'json',
        formatversion: '2',
        generator: 'search',
        gsrsearch: input.query,
        gsrlimit: String(k),
        prop: 'extracts|info',
        inprop: 'url',
        exintro: '1',
        explaintext: '1',
        exlimit: String(k),
        redirects: '1',
      };
      for (const [key, value] of Object.entries(parameters)) url.searchParams.set(key, value);
      try {
        const body = await fetchJson(settings.fetch ?? fetch, url.toString(), {
          headers: { 'user-agent': settings.userAgent ?? 'AgentFlow/0.1 (https://example.invalid/agentflow)' },
          signal: context.signal,
        }, { maxBytes: settings.maxResponseBytes ?? DEFAULT_SEARCH_RESPONSE_BYTES, setting: "the wikipedia tool's maxResponseBytes" });
        const parsed = queryResponseSchema.safeParse(body);
        if (!parsed.success) return done('', `Wikipedia answered in an unexpected shape: ${JSON.stringify(body).slice(0, 200)}`);
        if (parsed.data.error) return done('', `Wikipedia API error ${parsed.data.error.code}: ${parsed.data.error.info}`);
        const pages = [...(parsed.data.query?.pages ?? [])].sort((left, right) => (left.index ?? 0) - (right.index ?? 0));
        if (pages.length === 0) return done(`No Wikipedia article matches ${JSON.stringify(input.query)}.`);
        const output = pages
          .map((page, rank) => {
            const extract = page.extract ?? '';
            const text = extract.length > maxExtractChars ? `${extract.slice(0, maxExtractChars)}...` : extract;
            return `[${rank + 1}] ${page.title}${page.fullurl ? ` (${page.fullurl})` : ''}\n${text}`;
          })
          .join('\n\n');
        return done(output);
      } catch (error) {
        return done('', `wikipedia failed: ${errorMessage(error)}`);
      }
    },
  };
}
