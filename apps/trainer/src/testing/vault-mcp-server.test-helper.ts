import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// Test support (not exported): an MCP server as a user writes one, with the real SDK
// (a dependency of @agentflow/executor, resolved from there, since the script lives in a
// temp folder). Its tools: `secret_number` (answers 7331, what only it knows) and
// `wait_forever` (never answers). Flags: --name NAME (announced; default vault),
// --pid-file FILE, --waiting-file FILE (written when wait_forever is called), --linger
// (ignores the end of its stdin, so only a signal stops it), --http (Streamable HTTP on
// 127.0.0.1, its URL printed on stdout, instead of stdio).
const sdk = createRequire(join(__dirname, '..', '..', '..', '..', 'packages', 'executor', 'package.json'));
const sdkPath = (module: string) => JSON.stringify(sdk.resolve(`@modelcontextprotocol/sdk/${module}`));

const script = `// A user's MCP server with one tool of its own.
const { writeFileSync } = require('node:fs');
const { createServer } = require('node:http');
const { McpServer } = require(${sdkPath('server/mcp.js')});
const { StdioServerTransport } = require(${sdkPath('server/stdio.js')});
const { StreamableHTTPServerTransport } = require(${sdkPath('server/streamableHttp.js')});

const flag = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
if (flag('--pid-file')) writeFileSync(flag('--pid-file'), String(process.pid));

function createVault() {
  const server = new McpServer({ name: flag('--name') || 'vault', version: '1.0.0' });
  server.registerTool('secret_number', { description: 'Returns the secret number kept in the vault.' }, async () => ({
    content: [{ type: 'text', text: '7331' }],
  }));
  server.registerTool('wait_forever', { description: 'Never answers.' }, () => {
    if (flag('--waiting-file')) writeFileSync(flag('--waiting-file'), 'waiting');
    return new Promise(() => {});
  });
  return server;
}

if (process.argv.includes('--http')) {
  const http = createServer(async (request, response) => {
    // Stateless: one server and transport per request, as the SDK documents.
    const server = createVault();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  });
  http.listen(0, '127.0.0.1', () => process.stdout.write('http://127.0.0.1:' + http.address().port + '/mcp\\n'));
} else {
  createVault().connect(new StdioServerTransport());
  if (process.argv.includes('--linger')) setInterval(() => {}, 1000);
}
`;

/** Writes the server script into `dir` and returns its path. */
export function writeVaultServer(dir: string): string {
  const file = join(dir, 'vault-server.cjs');
  writeFileSync(file, script);
  return file;
}

/** Starts the script over Streamable HTTP; `url` is its endpoint, `stop` ends the process. */
export async function startVaultHttpServer(file: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [file, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the vault HTTP server exited with ${code} before printing its URL`)));
  });
  return { url, stop: () => child.kill() };
}

/** Whether the process of a pid file is still running. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
