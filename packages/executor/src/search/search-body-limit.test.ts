import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackServer } from './loopback-server.test-helper';
import { createWebSearchTool } from './web-search-tool';
import { createWikipediaTool } from './wikipedia-tool';

const context = () => ({ taskId: 't', signal: new AbortController().signal });
let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
});

/** A server whose every reply is a 200 of `bytes` bytes of JSON-looking text, sent with backpressure. */
async function startFloodServer(bytes: number) {
  let written = 0;
  const flood = (response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    response.write('{"answer":"');
    const pump = () => {
      while (written < bytes && !response.destroyed) {
        written += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', pump);
          return;
        }
      }
      if (!response.destroyed) response.end('"}');
    };
    pump();
  };
  const server = await startLoopbackServer((_request, response) => flood(response));
  closers.push(server.close);
  return { ...server, written: () => written };
}

describe('search tools read at most maxResponseBytes of a reply', () => {
  it('web_search: a 200 MB reply with a 1 MiB cap ends the call quickly with an error naming the URL, the cap and the setting', async () => {
    const server = await startFloodServer(200 * 1024 * 1024);
    const tool = createWebSearchTool({ baseUrl: server.url, environment: { TAVILY_API_KEY: 'k' }, maxResponseBytes: 1024 * 1024 });
    const started = performance.now();
    const result = await tool.execute({ query: 'x' }, context());
    expect(performance.now() - started).toBeLessThan(2000);
    expect(result.output).toBe('');
    expect(result.error).toMatch(
      new RegExp(
        `^web_search failed: ${server.url}/search sent a response body larger than the cap of 1 MiB \\(1048576 bytes\\) \\(read stopped after \\d+ bytes\\)\\. Raise the web_search tool's maxResponseBytes if replies this large are expected\\.$`,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.written()).toBeLessThan(32 * 1024 * 1024);
  });

  it('wikipedia: the default cap of 2 MiB holds', async () => {
    const server = await startFloodServer(20 * 1024 * 1024);
    const tool = createWikipediaTool({ baseUrl: `${server.url}/w/api.php` });
    const result = await tool.execute({ query: 'x' }, context());
    expect(result.error).toMatch(/larger than the cap of 2 MiB \(2097152 bytes\).*Raise the wikipedia tool's maxResponseBytes/);
  });
});
