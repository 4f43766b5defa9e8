import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { AgentFlowError, describeValue } from '@agentflow/core';
import type { BenchmarkItem } from './benchmark-item';
import { assertUniqueIds, type FieldMapping, fieldMappingSchema, mapRecord } from './field-mapping';
import { parseCsvRecords } from './parse-csv';

/** Field names of AgentFlow's benchmark JSON (aime24, amc23, gameof24, the QA sets). */
export const AGENTFLOW_JSON_FIELDS: FieldMapping = { id: 'pid', question: 'question', answer: 'answer', prompt: 'query' };
/** Field names of the AIME 1983-2024 CSV (`id`, `problem`, `answer`). */
export const AIME_CSV_FIELDS: FieldMapping = { id: 'id', question: 'problem', answer: 'answer' };

function readSource(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `Cannot read benchmark file ${path}: ${(cause as Error).message}`,
      cause,
      details: { path },
    });
  }
}

function parseMapping(mapping: FieldMapping | undefined, fallback: FieldMapping) {
  const parsed = fieldMappingSchema.safeParse(mapping ?? fallback);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid field mapping ${describeValue(mapping)}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}

function mapAll(records: unknown[], mapping: FieldMapping | undefined, fallback: FieldMapping, source: string): BenchmarkItem[] {
  const parsed = parseMapping(mapping, fallback);
  const items = records.map((record, index) => mapRecord(record, parsed, source, index));
  assertUniqueIds(items, source);
  return items;
}

/** Parses AgentFlow benchmark JSON text: an array of records with `pid`, `question`, `answer`, `query`. */
export function parseAgentFlowJson(text: string, source = 'JSON', fields?: FieldMapping): BenchmarkItem[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new AgentFlowError({ code: 'PARSE_ERROR', message: `${source}: not valid JSON (${(cause as Error).message}).`, cause });
  }
  if (!Array.isArray(value)) {
    throw new AgentFlowError({
      code: 'SCHEMA_VALIDATION',
      message: `${source}: expected a JSON array of problems, got ${describeValue(value)}.`,
    });
  }
  return mapAll(value, fields, AGENTFLOW_JSON_FIELDS, source);
}

/** Loads AgentFlow benchmark JSON (aime24.json, amc23.json, gameof24.json...). */
export function loadAgentFlowJson(path: string, fields?: FieldMapping): BenchmarkItem[] {
  return parseAgentFlowJson(readSource(path), path, fields);
}

/** Parses CSV text with a header row; the default fields are the AIME CSV's. */
export function parseCsvBenchmark(text: string, source = 'CSV', fields?: FieldMapping): BenchmarkItem[] {
  return mapAll(parseCsvRecords(text, source), fields, AIME_CSV_FIELDS, source);
}

/** Loads a CSV benchmark such as `aime_1983_2024.csv`; each item's `year` comes from its id. */
export function loadCsvBenchmark(path: string, fields?: FieldMapping): BenchmarkItem[] {
  return parseCsvBenchmark(readSource(path), path, fields);
}

/** Parses JSON-lines text, one record per line, with a field mapping (default `id`, `question`, `answer`). */
export function parseJsonlBenchmark(text: string, source = 'JSONL', fields?: FieldMapping): BenchmarkItem[] {
  const records: unknown[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      records.push(JSON.parse(line));
    } catch (cause) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `${source}:${index + 1}: not valid JSON (${(cause as Error).message}).`,
        cause,
        details: { source, line: index + 1 },
      });
    }
  });
  return mapAll(records, fields, { id: 'id', question: 'question', answer: 'answer' }, source);
}

/** Loads a JSON-lines benchmark with a field mapping. */
export function loadJsonlBenchmark(path: string, fields?: FieldMapping): BenchmarkItem[] {
  return parseJsonlBenchmark(readSource(path), path, fields);
}

/**
 * Loads any supported file by its extension: `.csv` (AIME CSV fields), `.json` (AgentFlow
 * JSON fields), `.jsonl` (`id`, `question`, `answer`). Pass `fields` to map other names.
 */
export function loadBenchmark(path: string, fields?: FieldMapping): BenchmarkItem[] {
  const extension = extname(path).toLowerCase();
  switch (extension) {
    case '.csv':
      return loadCsvBenchmark(path, fields);
    case '.json':
      return loadAgentFlowJson(path, fields);
    case '.jsonl':
    case '.ndjson':
      return loadJsonlBenchmark(path, fields);
    default:
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Unsupported benchmark file ${path}: expected .csv, .json or .jsonl, got ${describeValue(extension || '(none)')}.`,
        details: { path },
      });
  }
}
