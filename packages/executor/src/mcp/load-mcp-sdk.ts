import { createRequire } from 'node:module';
import { requireOptional } from '@agentflow/core';

// The MCP SDK is an optional peer: loaded on first use (its CommonJS build, so that the
// synchronous createMcpServer stays synchronous), never when @agentflow/executor is imported.
const require = createRequire(import.meta.url);
const MCP_SDK = '@modelcontextprotocol/sdk';

type ServerModule = typeof import('@modelcontextprotocol/sdk/server/index.js');
type TypesModule = typeof import('@modelcontextprotocol/sdk/types.js');
type ServerStdioModule = typeof import('@modelcontextprotocol/sdk/server/stdio.js');
type ClientModule = typeof import('@modelcontextprotocol/sdk/client/index.js');
type ClientStdioModule = typeof import('@modelcontextprotocol/sdk/client/stdio.js');
type ClientHttpModule = typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');

/** The SDK pieces that serve a registry: `Server`, the request schemas, the stdio transport. */
export function loadMcpServerSdk(feature: string) {
  const settings = { packageName: MCP_SDK, feature };
  return requireOptional(
    () => ({
      ...(require('@modelcontextprotocol/sdk/server/index.js') as ServerModule),
      ...(require('@modelcontextprotocol/sdk/types.js') as TypesModule),
      ...(require('@modelcontextprotocol/sdk/server/stdio.js') as ServerStdioModule),
    }),
    settings,
  );
}

/** The SDK pieces that join an external server: `Client` and its stdio and HTTP transports. */
export function loadMcpClientSdk(feature: string) {
  const settings = { packageName: MCP_SDK, feature };
  return requireOptional(
    () => ({
      ...(require('@modelcontextprotocol/sdk/client/index.js') as ClientModule),
      ...(require('@modelcontextprotocol/sdk/client/stdio.js') as ClientStdioModule),
      ...(require('@modelcontextprotocol/sdk/client/streamableHttp.js') as ClientHttpModule),
    }),
    settings,
  );
}
