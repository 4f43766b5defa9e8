import { randomUUID } from 'node:crypto';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeMemoryStoreConformance } from '../conformance/memory-store-conformance';
import { createQdrantMemoryStore } from './qdrant-memory-store';
import { type QdrantLoopbackServer, startQdrantLoopbackServer } from './qdrant-loopback-server';

const url = process.env.QDRANT_URL;
const uniqueCollection = () => `agentflow_conformance_${randomUUID().replaceAll('-', '')}`;

if (url) {
  // Every test gets its own collection, dropped at the end.
  const apiKey = process.env.QDRANT_API_KEY;
  const client = new QdrantClient({ url, ...(apiKey ? { apiKey } : {}), checkCompatibility: false });
  const collections: string[] = [];
  afterAll(async () => {
    await Promise.all(collections.map((name) => client.deleteCollection(name)));
  });
  describeMemoryStoreConformance(`Qdrant server at ${url}`, async ({ dimensions }) => {
    const collection = uniqueCollection();
    collections.push(collection);
    return createQdrantMemoryStore({ client, url, collection, dimensions });
  });
} else {
  console.info(
    'MemoryStore conformance against a real Qdrant server SKIPPED: QDRANT_URL is not set and no Qdrant server can run here. Set QDRANT_URL=http://host:6333 to run it. The adapter still runs the suite below against a loopback stand-in of the Qdrant REST API.',
  );
  describe('MemoryStore conformance: real Qdrant server', () => {
    it.skip('needs QDRANT_URL', () => {});
  });
}

describe('Qdrant adapter through the real client, against a loopback stand-in of the REST API', () => {
  let server: QdrantLoopbackServer;
  beforeAll(async () => {
    server = await startQdrantLoopbackServer();
  });
  afterAll(() => server.close());

  describeMemoryStoreConformance('Qdrant adapter (loopback stand-in)', async ({ dimensions }) =>
    createQdrantMemoryStore({ url: server.url, collection: uniqueCollection(), dimensions }),
  );

  it('reuses an existing collection and refuses one of another vector size', async () => {
    const collection = uniqueCollection();
    const first = await createQdrantMemoryStore({ url: server.url, collection, dimensions: 4 });
    await first.add([{ id: 'a', question: 'q', trajectory: 't', answer: 'x', outcome: 1, embedding: [1, 2, 3, 4], createdAt: '2026-01-01T00:00:00Z' }]);
    const again = await createQdrantMemoryStore({ url: server.url, collection, dimensions: 4 });
    expect(await again.count()).toBe(1);
    await expect(createQdrantMemoryStore({ url: server.url, collection, dimensions: 8 })).rejects.toThrowError(
      /has 4-dimensional vectors; this store was configured for 8/,
    );
  });

  it('reports an unreachable server as a network error naming the URL', async () => {
    await expect(createQdrantMemoryStore({ url: 'http://127.0.0.1:9', dimensions: 4, timeoutMs: 2000 })).rejects.toThrowError(
      /Qdrant collection setup .* at http:\/\/127\.0\.0\.1:9 failed/,
    );
  });
});
