import { AgentFlowError } from '@agentflow/core';
import { parseHttpUrl, parseMcpCommandSpec, parseMcpUrlSpec, type ToolSetSettings } from '@agentflow/executor';

/** The tool flags of `agentflow solve`, as commander hands them over. */
export interface SolveToolFlags {
  python: boolean;
  corpus?: string;
  webSearch?: boolean;
  tavilyKeyEnv: string;
  tavilyUrl?: string;
  wikipedia?: boolean;
  wikipediaUrl?: string;
  mcp?: string[];
  mcpUrl?: string[];
}

/** The URL as given, once it is known to be one. */
function checkedUrl(option: string, text: string): string {
  parseHttpUrl(text, { option });
  return text;
}

/** The built-in tools named by their flags in collision messages. */
const FLAG_LABELS = { python: 'python (built in; --no-python)', corpus: '--corpus', webSearch: '--web-search', wikipedia: '--wikipedia' };

/**
 * Checks the tool flags before anything starts and turns them into settings: a missing
 * Tavily key, a malformed command line or URL, or a URL flag without its tool is an
 * INVALID_ARGUMENT naming the flag.
 */
export function resolveSolveToolFlags(
  flags: SolveToolFlags,
  environment: Record<string, string | undefined>,
): Omit<ToolSetSettings, 'signal' | 'warn'> {
  const lonely = (option: string, needs: string) =>
    new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${option} is given without ${needs}; add ${needs} to offer that tool, or drop ${option}.`,
      details: { option },
    });
  if (flags.tavilyUrl !== undefined && !flags.webSearch) throw lonely('--tavily-url', '--web-search');
  if (flags.wikipediaUrl !== undefined && !flags.wikipedia) throw lonely('--wikipedia-url', '--wikipedia');
  if (flags.webSearch && !environment[flags.tavilyKeyEnv]) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--web-search needs a Tavily API key, but the environment variable ${flags.tavilyKeyEnv || '(empty name)'} is not set; set it to your key (https://tavily.com), or name another variable with --tavily-key-env.`,
      details: { option: '--tavily-key-env', variable: flags.tavilyKeyEnv },
    });
  }
  return {
    python: flags.python,
    labels: FLAG_LABELS,
    ...(flags.corpus === undefined ? {} : { corpus: { path: flags.corpus } }),
    ...(flags.webSearch
      ? {
          webSearch: {
            apiKeyEnv: flags.tavilyKeyEnv,
            ...(flags.tavilyUrl === undefined ? {} : { baseUrl: checkedUrl('--tavily-url', flags.tavilyUrl) }),
          },
        }
      : {}),
    ...(flags.wikipedia
      ? { wikipedia: flags.wikipediaUrl === undefined ? {} : { baseUrl: checkedUrl('--wikipedia-url', flags.wikipediaUrl) } }
      : {}),
    mcpServers: [
      ...(flags.mcp ?? []).map((text) => parseMcpCommandSpec(text, { option: '--mcp' })),
      ...(flags.mcpUrl ?? []).map((text) => parseMcpUrlSpec(text, { option: '--mcp-url' })),
    ],
  };
}
