import { AgentFlowError, loadConfig } from '@agentflow/core';
import { serveMcpOverStdio } from '@agentflow/executor';
import { runConfigSchema } from '../config/schema';
import type { RegisterCommand } from './command-context';
import { type McpCommandOptions, buildMcpRegistry } from './mcp/build-mcp-registry';

export const registerMcpCommand: RegisterCommand = (program, io) => {
  program
    .command('mcp')
    .description('Serve the tool registry over MCP (stdio): python, corpus_search, web_search, wikipedia.')
    .option('--corpus <file>', 'JSONL corpus ({id, title, text} per line) served as corpus_search')
    .option('--no-python', 'leave out the sandboxed python tool')
    .option('--offline', 'leave out web_search and wikipedia')
    .option('--tavily-key-env <name>', 'environment variable holding the Tavily API key', 'TAVILY_API_KEY')
    .option('--wikipedia-url <url>', 'MediaWiki action API endpoint (default https://en.wikipedia.org/w/api.php)')
    .option('--config <file>', 'YAML or JSON config (validated)')
    .action(async (options: McpCommandOptions & { config?: string }) => {
      if (options.config) loadConfig(options.config, runConfigSchema);
      const { registry, warnings } = await buildMcpRegistry(options);
      if (registry.names().length === 0) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: 'agentflow mcp has no tool to serve: --no-python and --offline without --corpus leave nothing.',
        });
      }
      for (const warning of warnings) io.stderr(`agentflow mcp: ${warning}\n`);
      io.stderr(`agentflow mcp: serving ${registry.names().join(', ')} over stdio\n`);
      // stdout belongs to the protocol from here on. A terminating signal still disposes
      // the REPLs and scratch folders before exiting.
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      try {
        await serveMcpOverStdio(registry, { signal: stop.signal });
      } finally {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      }
    });
};
