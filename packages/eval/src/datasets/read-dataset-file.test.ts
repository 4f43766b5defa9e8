import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBenchmark, loadJsonlBenchmark, parseAgentFlowJson, parseJsonlBenchmark } from './load-benchmark';
import { datasetReadLimitsSchema, resolveDatasetReadLimits } from './read-dataset-file';

const dir = mkdtempSync(join(tmpdir(), 'dataset-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function thrown(call: () => unknown): AgentFlowError {
  try {
    call();
  } catch (error) {
    expect(AgentFlowError.isInstance(error), String(error)).toBe(true);
    return error as AgentFlowError;
  }
  throw new Error('expected an AgentFlowError, nothing was thrown');
}

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));

describe('benchmark files checked before they are parsed', () => {
  it('refuses invalid UTF-8 naming the file, the line and the byte offset, in every format', () => {
    const jsonl = file('latin1.jsonl', bytes('{"id":"1","question":"q","answer":"1"}\n{"id":"2","question":"caf', [0xe9], '","answer":"2"}\n'));
    const error = thrown(() => loadBenchmark(jsonl));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toBe(`${jsonl}:2: not UTF-8 text: byte 0xe9 at byte offset 64 (line 2); save the file as UTF-8.`);
    expect(error.details).toMatchObject({ path: jsonl, line: 2, offset: 64, reason: 'invalid-utf8' });
    const csv = file('cut.csv', bytes('id,problem,answer\n1983_AIME_1,"x', [0xe2, 0x9c], '",1\n'));
    expect(thrown(() => loadBenchmark(csv)).message).toBe(`${csv}:2: not UTF-8 text: byte 0xe2 at byte offset 32 (line 2); save the file as UTF-8.`);
    const json = file('surrogate.json', bytes('[{"pid":"1","question":"', [0xed, 0xa0, 0x80], '","answer":1}]'));
    expect(thrown(() => loadBenchmark(json)).message).toMatch(/surrogate\.json:1: not UTF-8 text: byte 0xed at byte offset 24 \(line 1\)/);
    // A byte-order mark is UTF-8 and not part of the data.
    expect(loadBenchmark(file('bom.json', `\uFEFF[{"pid":"1","question":"q","answer":1}]`))[0]?.id).toBe('1');
  });

  it('refuses a record nested past limits.maxDepth before parsing it, and brackets inside questions do not count', () => {
    const deepLine = `{"id":"2","question":"q","answer":"2","extra":${'['.repeat(70)}1${']'.repeat(70)}}`;
    const path = file('deep.jsonl', `{"id":"1","question":"[[[[[[","answer":"1"}\n${deepLine}\n`);
    const error = thrown(() => loadJsonlBenchmark(path));
    expect(error.message).toBe(`${path}:2: lists and objects nest more than 64 levels deep (line 2, character 110); a benchmark record nests a few levels (limits.maxDepth).`);
    expect(loadJsonlBenchmark(path, undefined, { maxDepth: 80 })).toHaveLength(2);
    expect(thrown(() => parseAgentFlowJson(`[${'['.repeat(64)}${']'.repeat(64)}]`, 'deep.json')).message).toMatch(/^deep\.json: lists and objects nest more than 64 levels deep \(line 1, character 65\)/);
  });

  it('refuses a JSONL line over limits.maxLineBytes, naming the line and the cap', () => {
    const text = `{"id":"1","question":"short","answer":"1"}\n{"id":"2","question":"${'é'.repeat(40)}","answer":"2"}\n`;
    const error = thrown(() => parseJsonlBenchmark(text, 'long.jsonl', undefined, { maxLineBytes: 64 }));
    expect(error.message).toBe('long.jsonl:2: the line is 117 bytes, over the cap of 64 bytes per JSONL record (limits.maxLineBytes).');
    expect(parseJsonlBenchmark(text, 'long.jsonl', undefined, { maxLineBytes: 117 })).toHaveLength(2);
  });

  it('states its defaults and refuses a limit that is not a positive integer', () => {
    expect(datasetReadLimitsSchema.parse({})).toEqual({ maxBytes: 128 * 1024 * 1024, maxLineBytes: 8 * 1024 * 1024, maxDepth: 64 });
    expect(thrown(() => resolveDatasetReadLimits({ maxBytes: 0 })).message).toMatch(/^Invalid dataset read limits: limits\.maxBytes: /);
    expect(() => loadBenchmark(file('x.csv', 'id,problem,answer\n'), undefined, { maxDepth: -1 })).toThrow(/limits\.maxDepth/);
  });
});

const shared = process.env.AGENTFLOW_DATASETS ?? resolve(__dirname, '..', '..', '..', '..', '..', 'shared', 'datasets');
const sharedPresent = existsSync(join(shared, 'aime_1983_2024.csv'));
if (!sharedPresent) console.log(`read-dataset-file: shared datasets SKIPPED, no benchmark files at ${shared} (set AGENTFLOW_DATASETS).`);

describe.skipIf(!sharedPresent)(`every shared benchmark file still loads through the checks (${shared})`, () => {
  // Item counts from the folder's README; the files whose question is `query` map it.
  const files: Array<[string, number, Parameters<typeof loadBenchmark>[1]?]> = [
    ['aime_1983_2024.csv', 982],
    ['aime24.json', 30],
    ['amc23.json', 40],
    ['gameof24.json', 300],
    ['bamboogle.json', 125],
    ['2wiki.json', 200, { id: 'pid', question: 'query', answer: 'answer' }],
    ['hotpotqa.json', 100],
    ['musique.json', 200, { id: 'pid', question: 'query', answer: 'answer' }],
    ['gaia.json', 127],
    ['gpqa.json', 300, { id: 'pid', question: 'question', answer: 'answer', prompt: 'query', choices: 'choices' }],
  ];
  it.each(files)('%s: %i items, no replacement character', (name, count, fields) => {
    const items = loadBenchmark(join(shared, name), fields);
    expect(items).toHaveLength(count);
    expect(items.some((item) => item.question.includes('\uFFFD'))).toBe(false);
  });

  it('medqa.json passes the file checks; 100 of its 300 pids repeat with other questions, refused unless read by position', () => {
    expect(() => loadBenchmark(join(shared, 'medqa.json'))).toThrow(/medqa\.json: id "0" appears more than once; ids must be unique/);
    expect(new Set(loadBenchmark(join(shared, 'medqa.json'), undefined, undefined, 'by-position').map((item) => item.id)).size).toBe(300);
  });
});
