// Test support, not public API. A loopback HTTP server that answers the subset of Qdrant's
// REST API that the adapter uses (paths and bodies as in the OpenAPI schema shipped with
// @qdrant/js-client-rest 1.18): collections exist/create/get/delete, points upsert/retrieve/
// delete/count/query on a named dense vector (cosine) and a named sparse vector with the
// IDF modifier. It lets the adapter run through the real client here, where no Qdrant can
// run; it is not Qdrant, so QDRANT_URL runs the same suite against the real server.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface SparseVector {
  indices: number[];
  values: number[];
}
interface Point {
  id: string;
  vector: Record<string, number[] | SparseVector>;
  payload: Record<string, unknown>;
}
interface Collection {
  config: { params: { vectors: Record<string, { size: number; distance: string }>; sparse_vectors: Record<string, unknown> } };
  points: Map<string, Point>;
}

const isSparse = (vector: unknown): vector is SparseVector =>
  typeof vector === 'object' && vector !== null && 'indices' in vector;
const unit = (vector: number[]) => {
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
};

export interface QdrantLoopbackServer {
  url: string;
  close(): Promise<void>;
}

export async function startQdrantLoopbackServer(): Promise<QdrantLoopbackServer> {
  const collections = new Map<string, Collection>();

  const select = (point: Point, withPayload: unknown, withVector: unknown) => {
    const names = withVector === true ? Object.keys(point.vector) : Array.isArray(withVector) ? (withVector as string[]) : [];
    const vector = Object.fromEntries(names.filter((name) => name in point.vector).map((name) => [name, point.vector[name]]));
    return { id: point.id, version: 1, payload: withPayload === false ? null : point.payload, vector: names.length ? vector : null };
  };

  const query = (collection: Collection, body: Record<string, unknown>) => {
    const using = String(body.using);
    const points = [...collection.points.values()].filter((point) => using in point.vector);
    let scored: { point: Point; score: number }[];
    if (isSparse(body.query)) {
      const total = points.length;
      const queryVector = body.query;
      const frequency = (index: number) => points.filter((point) => (point.vector[using] as SparseVector).indices.includes(index)).length;
      scored = points.flatMap((point) => {
        const stored = point.vector[using] as SparseVector;
        let score = 0;
        let shared = false;
        queryVector.indices.forEach((index, position) => {
          const at = stored.indices.indexOf(index);
          if (at < 0) return;
          shared = true;
          const documents = frequency(index);
          const idf = Math.log((total - documents + 0.5) / (documents + 0.5) + 1);
          score += idf * (queryVector.values[position] ?? 0) * (stored.values[at] ?? 0);
        });
        return shared ? [{ point, score }] : [];
      });
    } else {
      const queryVector = unit(body.query as number[]);
      scored = points.map((point) => ({
        point,
        score: (point.vector[using] as number[]).reduce((sum, value, index) => sum + value * (queryVector[index] ?? 0), 0),
      }));
    }
    scored.sort((a, b) => b.score - a.score);
    return {
      points: scored
        .slice(0, Number(body.limit ?? 10))
        .map(({ point, score }) => ({ ...select(point, body.with_payload, body.with_vector), score })),
    };
  };

  const handle = (method: string, path: string, body: Record<string, unknown>): [number, unknown] => {
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!match) return [404, { status: { error: `Not found: ${path}` } }];
    const name = decodeURIComponent(match[1]!);
    const rest = match[2] ?? '';
    const collection = collections.get(name);
    if (method === 'GET' && rest === '/exists') return [200, { exists: collection !== undefined }];
    if (method === 'PUT' && rest === '') {
      const vectors = body.vectors as Record<string, { size: number; distance: string }>;
      collections.set(name, { config: { params: { vectors, sparse_vectors: (body.sparse_vectors ?? {}) as Record<string, unknown> } }, points: new Map() });
      return [200, true];
    }
    if (!collection) return [404, { status: { error: `Not found: Collection \`${name}\` doesn't exist!` } }];
    if (method === 'DELETE' && rest === '') return [200, collections.delete(name)];
    if (method === 'GET' && rest === '') return [200, { status: 'green', points_count: collection.points.size, config: collection.config }];
    if (method === 'PUT' && rest === '/points') {
      for (const point of body.points as Point[]) {
        const vector = { ...point.vector };
        for (const [vectorName, value] of Object.entries(vector)) {
          if (isSparse(value)) continue;
          const size = collection.config.params.vectors[vectorName]?.size;
          if (value.length !== size) return [400, { status: { error: `Wrong input: Vector dimension error: expected dim: ${size}, got ${value.length}` } }];
          vector[vectorName] = unit(value).map(Math.fround); // Qdrant keeps cosine vectors normalised, as float32
        }
        collection.points.set(point.id, { id: point.id, vector, payload: point.payload });
      }
      return [200, { operation_id: 1, status: 'completed' }];
    }
    if (method === 'POST' && rest === '/points') {
      const found = (body.ids as string[]).flatMap((id) => collection.points.get(id) ?? []);
      return [200, found.map((point) => select(point, body.with_payload, body.with_vector))];
    }
    if (method === 'POST' && rest === '/points/delete') {
      for (const id of body.points as string[]) collection.points.delete(id);
      return [200, { operation_id: 2, status: 'completed' }];
    }
    if (method === 'POST' && rest === '/points/count') return [200, { count: collection.points.size }];
    if (method === 'POST' && rest === '/points/query') return [200, query(collection, body)];
    return [404, { status: { error: `Not found: ${method} ${path}` } }];
  };

  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      const started = process.hrtime.bigint();
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      const [status, result] = handle(request.method ?? 'GET', path, text ? JSON.parse(text) : {});
      const time = Number(process.hrtime.bigint() - started) / 1e9;
      const envelope = status === 200 ? { result, status: 'ok', time } : { ...(result as object), time };
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(envelope));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
