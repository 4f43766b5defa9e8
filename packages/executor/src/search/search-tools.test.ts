import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCorpusSearchTool, loadCorpus } from './corpus-search-tool';
import { startLoopbackServer } from './loopback-server.test-helper';
import { createWebSearchTool } from './web-search-tool';
import { createWikipediaTool } from './wikipedia-tool';

const fixture = (name: string) => join(__dirname, '__fixtures__', name);
const context = () => ({ taskId: 't', signal: new AbortController().signal });
let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
});

describe('corpus_search', () => {
  it('ranks documents by BM25 and shows ids, titles and scores', async () => {
    const tool = createCorpusSearchTool({ path: fixture('corpus.jsonl') });
    const result = await tool.execute({ query: 'capital of Ostria', k: 2 }, context());
    const lines = result.output.split('\n');
    expect(lines[0]).toMatch(/^\[1\] (Ostria|Lumen) \(id (d3|4), score \d+\.\d{3}\)$/);
    expect(result.output).toContain('[2]');
    expect(result.output).not.toContain('[3]');
    // Both documents that mention the capital outrank the mountain.
    expect(result.output).not.toContain('Mount Kirra');
  });

  it("with hitHeader 'title' shows each hit as one `title: text` line, without rank, id or score", async () => {
    const tool = createCorpusSearchTool({ path: fixture('corpus.jsonl'), hitHeader: 'title' });
    const lines = (await tool.execute({ query: 'capital of Ostria', k: 2 }, context())).output.split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/^(Ostria|Lumen): \S/);
    expect(lines.join('\n')).not.toMatch(/\[1\]|id |score/);
    expect(() => createCorpusSearchTool({ path: fixture('corpus.jsonl'), hitHeader: 'short' as never })).toThrow(/hitHeader must be 'full' or 'title', got "short"/);
  });

  it('reads a last line without a newline, and numeric ids', () => {
    const documents = loadCorpus(fixture('corpus.jsonl'));
    expect(documents).toHaveLength(5);
    expect(documents[3]!.id).toBe('4');
    expect(documents[4]!.title).toBe('River Sel');
  });

  it('scores a rare term above a common one (idf) and says when nothing matches', async () => {
    const tool = createCorpusSearchTool({
      documents: [
        { id: 'a', title: 'A', text: 'the the the cat' },
        { id: 'b', title: 'B', text: 'the dog' },
        { id: 'c', title: 'C', text: 'the bird' },
      ],
    });
    expect((await tool.execute({ query: 'the dog' }, context())).output).toMatch(/^\[1\] B \(id b/);
    expect((await tool.execute({ query: 'zebra' }, context())).output).toBe('No document matches "zebra".');
  });

  it('names the line of a bad corpus record', () => {
    expect(() => createCorpusSearchTool({ documents: [{ id: 'x', title: 't' } as never] })).toThrow(/documents\[0\]: expected \{id, title, text\}: text/);
    expect(() => createCorpusSearchTool({})).toThrow(/exactly one of `path`/);
    expect(() => loadCorpus('/nonexistent/corpus.jsonl')).toThrow('Corpus file not found: /nonexistent/corpus.jsonl');
  });
});

describe('web_search (Tavily wire format on loopback)', () => {
  it('posts the query with the key and formats answer and results', async () => {
    const server = await startLoopbackServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(readFileSync(fixture('tavily-search.json')));
    });
    closers.push(server.close);
    const tool = createWebSearchTool({ baseUrl: server.url, environment: { TAVILY_API_KEY: 'tvly-test' } });
    const result = await tool.execute({ query: 'Who is Leo Messi?', k: 2 }, context());
    expect(result.error).toBeUndefined();
    expect(result.output).toMatch(/^Answer: Lionel Messi, born in 1987/);
    expect(result.output).toContain('[1] Lionel Messi Facts | Britannica (https://www.britannica.com/facts/Lionel-Messi)');
    expect(result.output).toContain('[2] Lionel Messi - Wikipedia');
    const [request] = server.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/search');
    expect(request!.headers.authorization).toBe('Bearer tvly-test');
    expect(JSON.parse(request!.body)).toMatchObject({ query: 'Who is Leo Messi?', max_results: 2, search_depth: 'basic' });
  });

  it('without a key says which variable to set, and sends nothing', async () => {
    const tool = createWebSearchTool({ apiKeyEnv: 'MY_TAVILY_KEY', environment: {}, fetch: () => Promise.reject(new Error('must not be called')) });
    const result = await tool.execute({ query: 'x' }, context());
    expect(result.error).toBe('web_search is not configured: set the environment variable MY_TAVILY_KEY to a Tavily API key (https://tavily.com).');
  });

  it('reports a rejected key with the status and Tavily message', async () => {
    const server = await startLoopbackServer((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":{"error":"Unauthorized: missing or invalid API key."}}');
    });
    closers.push(server.close);
    const tool = createWebSearchTool({ baseUrl: server.url, environment: { TAVILY_API_KEY: 'bad' } });
    const result = await tool.execute({ query: 'x' }, context());
    expect(result.error).toContain(`${server.url}/search answered HTTP 401`);
    expect(result.error).toContain('missing or invalid API key');
  });

  it('reports an unreachable endpoint by its URL', async () => {
    const server = await startLoopbackServer(() => undefined);
    await server.close();
    const tool = createWebSearchTool({ baseUrl: server.url, environment: { TAVILY_API_KEY: 'k' } });
    const result = await tool.execute({ query: 'x' }, context());
    expect(result.error).toContain(`web_search failed: Could not reach ${server.url}/search`);
  });
});

describe('wikipedia (MediaWiki action API on loopback)', () => {
  it('searches with generator=search + extracts and lists pages in search order', async () => {
    const server = await startLoopbackServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(readFileSync(fixture('mediawiki-search-extracts.json')));
    });
    closers.push(server.close);
    const tool = createWikipediaTool({ baseUrl: `${server.url}/w/api.php` });
    const result = await tool.execute({ query: 'speed of light', k: 2 }, context());
    expect(result.error).toBeUndefined();
    expect(result.output).toMatch(/^\[1\] Light \(https:\/\/en.wikipedia.org\/wiki\/Light\)\nLight, visible light/);
    expect(result.output).toContain('[2] Speed of light');
    const url = new URL(server.requests[0]!.url, server.url);
    expect(url.pathname).toBe('/w/api.php');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      action: 'query',
      generator: 'search',
      gsrsearch: 'speed of light',
      gsrlimit: '2',
      explaintext: '1',
      formatversion: '2',
    });
    expect(server.requests[0]!.headers['user-agent']).toMatch(/AgentFlow/);
  });

  it('says when nothing matches, and reports an API error', async () => {
    let answer = '{"batchcomplete":true}';
    const server = await startLoopbackServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
    closers.push(server.close);
    const tool = createWikipediaTool({ baseUrl: `${server.url}/w/api.php` });
    expect((await tool.execute({ query: 'qwzx' }, context())).output).toBe('No Wikipedia article matches "qwzx".');
    answer = '{"error":{"code":"badvalue","info":"Unrecognized value for parameter \\"prop\\"."}}';
    expect((await tool.execute({ query: 'x' }, context())).error).toBe('Wikipedia API error badvalue: Unrecognized value for parameter "prop".');
  });

  it('reports malformed JSON naming the URL', async () => {
    const server = await startLoopbackServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"query": {"pages": [');
    });
    closers.push(server.close);
    const tool = createWikipediaTool({ baseUrl: `${server.url}/w/api.php` });
    expect((await tool.execute({ query: 'x' }, context())).error).toMatch(/wikipedia failed: http:\/\/127.0.0.1:\d+\/w\/api.php\?.* answered with invalid JSON/);
  });
});
