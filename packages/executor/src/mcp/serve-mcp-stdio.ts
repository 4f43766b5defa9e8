import type { Readable, Writable } from 'node:stream';
import type { ToolRegistry } from '../registry/tool-registry';
import { loadMcpServerSdk } from './load-mcp-sdk';
import { type McpServerSettings, createMcpServer } from './mcp-server';

export interface ServeMcpStdioSettings extends McpServerSettings {
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. */
  stdout?: Writable;
  /** Stops serving (then disposes the registry), e.g. on SIGTERM. */
  signal?: AbortSignal;
}

/**
 * Serves a registry over stdio until the client closes stdin (or `signal` aborts), then
 * disposes the registry. Nothing else may write to stdout meanwhile.
 */
export async function serveMcpOverStdio(registry: ToolRegistry, settings: ServeMcpStdioSettings = {}): Promise<void> {
  const { StdioServerTransport } = loadMcpServerSdk('serveMcpOverStdio');
  const stdin = settings.stdin ?? process.stdin;
  const server = createMcpServer(registry, settings);
  const disposeTask = server.onclose;
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => {
      disposeTask?.();
      resolve();
    };
  });
  // The SDK's stdio transport does not end on EOF by itself.
  stdin.once('end', () => void server.close());
  settings.signal?.addEventListener('abort', () => void server.close(), { once: true });
  await server.connect(new StdioServerTransport(stdin, settings.stdout ?? process.stdout));
  await closed;
  await registry.dispose();
}
