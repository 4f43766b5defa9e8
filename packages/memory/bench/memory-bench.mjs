#!/usr/bin/env node
// Benchmark of the SQLite cross-task memory: insert and query throughput at 100,000 records
// (BM25 and vector), and recall@10 of sqlite-vec search against an exact brute-force scan
// computed in the same run. Baselines measured in the same run: one transaction per record
// (insert), a LIKE scan (text query), a JavaScript brute-force scan (vector query).
// Usage: pnpm --filter @agentflow/memory bench [-- --records 100000 --dimensions 384]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createSqliteMemoryStore } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    dimensions: { type: 'string', default: '384' },
    queries: { type: 'string', default: '100' },
    seed: { type: 'string', default: '7' },
  },
});
const RECORDS = Number(values.records);
const DIMENSIONS = Number(values.dimensions); // all-MiniLM-L6-v2 size
const QUERIES = Number(values.queries);
const BATCH = 1000;
const K = 10;
const CLUSTERS = 200;

// mulberry32: a small seeded generator so every run inserts the same data.
function createGenerator(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  return { next, gaussian };
}
const random = createGenerator(Number(values.seed));

// Words with a Zipf (exponent 1) frequency, as in natural language: the commonest word is in
// almost every record, as "the" or "what" would be.
const vocabulary = Array.from({ length: 20000 }, (_, index) => `w${index.toString(36)}`);
const word = () => vocabulary[Math.floor(Math.exp(random.next() * Math.log(vocabulary.length + 1))) - 1];
const sentence = (length) => Array.from({ length }, word).join(' ');

const centres = Array.from({ length: CLUSTERS }, () => Float32Array.from({ length: DIMENSIONS }, random.gaussian));
function unitNear(centre, spread) {
  const vector = Float32Array.from(centre, (value) => value + spread * random.gaussian());
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  return vector.map((value) => value / norm);
}

const matrix = new Float32Array(RECORDS * DIMENSIONS); // [records, dimensions], exact copy for brute force
const questions = [];
function makeRecord(index) {
  const vector = unitNear(centres[index % CLUSTERS], 0.6);
  matrix.set(vector, index * DIMENSIONS);
  const question = sentence(12);
  if (index % Math.ceil(RECORDS / QUERIES) === 0) questions.push(question);
  return {
    id: `record-${index}`,
    question,
    trajectory: sentence(30),
    answer: sentence(2),
    outcome: index % 2,
    embedding: Array.from(vector),
    metadata: { index },
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}

const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
async function timeQueries(count, run) {
  const latencies = [];
  const start = process.hrtime.bigint();
  for (let index = 0; index < count; index++) {
    const one = process.hrtime.bigint();
    await run(index);
    latencies.push(seconds(one) * 1000);
  }
  const total = seconds(start);
  latencies.sort((a, b) => a - b);
  return { perSecond: count / total, p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) };
}

const directory = mkdtempSync(join(tmpdir(), 'agentflow-memory-bench-'));
const path = join(directory, 'memory.sqlite');
const store = createSqliteMemoryStore({ path, dimensions: DIMENSIONS });
const lines = [];
const report = (line) => {
  lines.push(line);
  console.log(line);
};
report(`records ${RECORDS}, dimensions ${DIMENSIONS}, batch ${BATCH}, k ${K}, queries ${QUERIES}, node ${process.version}, ${availableParallelism()} CPUs, load average ${loadavg()[0].toFixed(1)} at start`);

// Insert: batches of 1000 records, one transaction each.
let start = process.hrtime.bigint();
for (let first = 0; first < RECORDS; first += BATCH) {
  const batch = [];
  for (let index = first; index < Math.min(RECORDS, first + BATCH); index++) batch.push(makeRecord(index));
  await store.add(batch);
}
const insertSeconds = seconds(start);
const insertRate = RECORDS / insertSeconds;

// Baseline: one add (one transaction, one WAL commit) per record, on a separate file.
const baselineStore = createSqliteMemoryStore({ path: join(directory, 'baseline.sqlite'), dimensions: DIMENSIONS });
const BASELINE_INSERTS = Math.min(2000, RECORDS);
start = process.hrtime.bigint();
for (let index = 0; index < BASELINE_INSERTS; index++) {
  await baselineStore.add([{ ...makeRecordLight(index), embedding: Array.from(matrix.subarray(index * DIMENSIONS, (index + 1) * DIMENSIONS)) }]);
}
const baselineInsertRate = BASELINE_INSERTS / seconds(start);
await baselineStore.close();
function makeRecordLight(index) {
  return { id: `baseline-${index}`, question: sentence(12), trajectory: sentence(30), answer: sentence(2), outcome: 1, createdAt: '2026-01-01T00:00:00.000Z' };
}

report('');
report('| operation | throughput | p50 ms | p95 ms | baseline (same run) | ratio |');
report('|---|---|---|---|---|---|');
report(
  `| insert, add() of 1000 records | ${insertRate.toFixed(0)} records/s (${insertSeconds.toFixed(1)} s total) | | | ${baselineInsertRate.toFixed(0)} records/s, add() of 1 record | ${(insertRate / baselineInsertRate).toFixed(1)}x |`,
);

// BM25 through FTS5 vs a LIKE scan over the same table.
const bm25 = await timeQueries(questions.length, (index) => store.search({ mode: 'bm25', text: questions[index], k: K }));
const raw = new Database(path, { readonly: true });
// Without FTS5, finding the records that contain a word means scanning every row.
const like = raw.prepare(`SELECT id FROM memory_records WHERE question LIKE ? OR trajectory LIKE ?`);
const LIKE_QUERIES = Math.min(20, questions.length);
const likeScan = await timeQueries(LIKE_QUERIES, (index) => {
  const term = `%${questions[index].split(' ').at(-1)}%`;
  like.all(term, term);
});
raw.close();
// Rare words only: the posting lists are short, which is where an inverted index shines.
const rareQueries = Array.from({ length: questions.length }, () =>
  Array.from({ length: 3 }, () => vocabulary[10000 + Math.floor(random.next() * 10000)]).join(' '),
);
const rare = await timeQueries(rareQueries.length, (index) => store.search({ mode: 'bm25', text: rareQueries[index], k: K }));
report(
  `| BM25 query (FTS5), 12 words with Zipf frequencies, k=10 | ${bm25.perSecond.toFixed(1)} queries/s | ${bm25.p50.toFixed(2)} | ${bm25.p95.toFixed(2)} | ${likeScan.perSecond.toFixed(1)} queries/s, LIKE full scan for one word | ${(bm25.perSecond / likeScan.perSecond).toFixed(1)}x |`,
);
report(
  `| BM25 query (FTS5), 3 rare words, k=10 | ${rare.perSecond.toFixed(1)} queries/s | ${rare.p50.toFixed(2)} | ${rare.p95.toFixed(2)} | same LIKE scan | ${(rare.perSecond / likeScan.perSecond).toFixed(1)}x |`,
);

// Vector: sqlite-vec vs exact brute force in JavaScript over the same float32 vectors.
const queryVectors = Array.from({ length: QUERIES }, (_, index) => unitNear(centres[(index * 7) % CLUSTERS], 0.6));
const vectorResults = [];
const vector = await timeQueries(QUERIES, async (index) => {
  vectorResults[index] = await store.search({ mode: 'vector', embedding: Array.from(queryVectors[index]), k: K });
});
function bruteForce(query) {
  const scores = new Float64Array(RECORDS); // [records] cosine (all vectors are unit length)
  for (let row = 0; row < RECORDS; row++) {
    let dot = 0;
    const offset = row * DIMENSIONS;
    for (let column = 0; column < DIMENSIONS; column++) dot += matrix[offset + column] * query[column];
    scores[row] = dot;
  }
  const order = Array.from({ length: RECORDS }, (_, row) => row);
  return order.sort((a, b) => scores[b] - scores[a]).slice(0, K).map((row) => `record-${row}`);
}
const exact = [];
const brute = await timeQueries(QUERIES, (index) => {
  exact[index] = bruteForce(queryVectors[index]);
});
let hits = 0;
for (let index = 0; index < QUERIES; index++) {
  const found = new Set(vectorResults[index].map((result) => result.record.id));
  hits += exact[index].filter((id) => found.has(id)).length;
}
const recall = hits / (QUERIES * K);
report(
  `| vector query (sqlite-vec, cosine), k=10 | ${vector.perSecond.toFixed(1)} queries/s | ${vector.p50.toFixed(2)} | ${vector.p95.toFixed(2)} | ${brute.perSecond.toFixed(1)} queries/s, exact JS scan | ${(vector.perSecond / brute.perSecond).toFixed(1)}x |`,
);
const hybrid = await timeQueries(QUERIES, (index) =>
  store.search({ mode: 'hybrid', text: questions[index % questions.length], embedding: Array.from(queryVectors[index]), k: K }),
);
report(`| hybrid query (RRF of both, depth 100), k=10 | ${hybrid.perSecond.toFixed(1)} queries/s | ${hybrid.p50.toFixed(2)} | ${hybrid.p95.toFixed(2)} | | |`);
report('');
report(`recall@10 of sqlite-vec vector search vs exact brute force: ${recall.toFixed(4)} (${hits}/${QUERIES * K})`);
await store.close();
const size = statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
report(`database size: ${(size / 1024 / 1024).toFixed(0)} MiB`);
rmSync(directory, { recursive: true, force: true });
