import { extname } from 'node:path';
import { AgentFlowError, describeValue, findJsonDepthExcess, formatByteCount } from '@agentflow/core';
import type { BenchmarkItem } from './benchmark-item';
import { type DuplicateIdPolicy, type FieldMapping, fieldMappingSchema, mapRecord, withUniqueIds } from './field-mapping';
import { parseCsvRecords } from './parse-csv';
import { type DatasetReadLimits, readDatasetText, resolveDatasetReadLimits } from './read-dataset-file';

/** Field names of AgentFlow's benchmark JSON (aime24, amc23, gameof24, the QA sets). */
export const AGENTFLOW_JSON_FIELDS: FieldMapping = { id: 'pid', question: 'question', answer: 'answer', prompt: 'query' };
/** Field names of the AIME 1983-2024 CSV (`id`, `problem`, `answer`). */
export const AIME_CSV_FIELDS: FieldMapping = { id: 'id', question: 'problem', answer: 'answer' };

/** Refuses JSON text nested deeper than `maxDepth` before it is parsed; `where` names the file (and line). */
function checkDepth(text: string, where: string, maxDepth: number, lineOffset = 0): void {
  const excess = findJsonDepthExcess(text, maxDepth);
  if (!excess) return;
  const line = excess.line + lineOffset;
  throw new AgentFlowError({
    code: 'PARSE_ERROR',
    message: `${where}: lists and objects nest more than ${maxDepth} levels deep (line ${line}, character ${excess.index + 1}); a benchmark record nests a few levels (limits.maxDepth).`,
    details: { source: where, line, maxDepth, reason: 'too-deep' },
  });
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

function mapAll(records: unknown[], mapping: FieldMapping | undefined, fallback: FieldMapping, source: string, duplicateIds: DuplicateIdPolicy): BenchmarkItem[] {
  const parsed = parseMapping(mapping, fallback);
  return withUniqueIds(
    records.map((record, index) => mapRecord(record, parsed, source, index)),
    source,
    duplicateIds,
  );
}

/**
 * Parses AgentFlow benchmark JSON text: an array of records with `pid`, `question`, `answer`,
 * `query`. Text nested deeper than `limits.maxDepth` (the array counts) is refused unparsed.
 * A repeated id is refused unless `duplicateIds` is `by-position` ({@link DuplicateIdPolicy}).
 */
export function parseAgentFlowJson(
  text: string,
  source = 'JSON',
  fields?: FieldMapping,
  limits?: DatasetReadLimits,
  duplicateIds: DuplicateIdPolicy = 'refuse',
): BenchmarkItem[] {
  checkDepth(text, source, resolveDatasetReadLimits(limits).maxDepth);
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
  return mapAll(value, fields, AGENTFLOW_JSON_FIELDS, source, duplicateIds);
}

/**
 * Loads AgentFlow benchmark JSON (aime24.json, amc23.json, gameof24.json...), read as
 * `readDatasetText` reads it: a regular file, at most `limits.maxBytes`, UTF-8.
 */
export function loadAgentFlowJson(path: string, fields?: FieldMapping, limits?: DatasetReadLimits, duplicateIds: DuplicateIdPolicy = 'refuse'): BenchmarkItem[] {
  const resolved = resolveDatasetReadLimits(limits);
  return parseAgentFlowJson(readDatasetText(path, resolved), path, fields, resolved, duplicateIds);
}

/** Parses CSV text with a header row; the default fields are the AIME CSV's. */
export function parseCsvBenchmark(text: string, source = 'CSV', fields?: FieldMapping, duplicateIds: DuplicateIdPolicy = 'refuse'): BenchmarkItem[] {
  return mapAll(parseCsvRecords(text, source), fields, AIME_CSV_FIELDS, source, duplicateIds);
}

/**
 * Loads a CSV benchmark such as `aime_1983_2024.csv`; each item's `year` comes from its id.
 * Read as `readDatasetText` reads it: a regular file, at most `limits.maxBytes`, UTF-8.
 */
export function loadCsvBenchmark(path: string, fields?: FieldMapping, limits?: DatasetReadLimits, duplicateIds: DuplicateIdPolicy = 'refuse'): BenchmarkItem[] {
  return parseCsvBenchmark(readDatasetText(path, resolveDatasetReadLimits(limits)), path, fields, duplicateIds);
}

/**
 * Parses JSON-lines text, one record per line, with a field mapping (default `id`, `question`,
 * `answer`). Each line is checked before it is parsed: at most `limits.maxLineBytes` bytes of
 * UTF-8 and nested at most `limits.maxDepth` deep; a line past either is a PARSE_ERROR naming
 * `source`, the line and the limit.
 */
export function parseJsonlBenchmark(
  text: string,
  source = 'JSONL',
  fields?: FieldMapping,
  limits?: DatasetReadLimits,
  duplicateIds: DuplicateIdPolicy = 'refuse',
): BenchmarkItem[] {
  const { maxLineBytes, maxDepth } = resolveDatasetReadLimits(limits);
  const records: unknown[] = [];
  let start = 0;
  for (let index = 0; start <= text.length; index++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim() === '') continue;
    const bytes = Buffer.byteLength(line, 'utf8');
    if (bytes > maxLineBytes) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `${source}:${index + 1}: the line is ${formatByteCount(bytes)}, over the cap of ${formatByteCount(maxLineBytes)} per JSONL record (limits.maxLineBytes).`,
        details: { source, line: index + 1, bytes, maxLineBytes, reason: 'line-too-long' },
      });
    }
    checkDepth(line, `${source}:${index + 1}`, maxDepth, index);
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
  }
  return mapAll(records, fields, { id: 'id', question: 'question', answer: 'answer' }, source, duplicateIds);
}

/**
 * Loads a JSON-lines benchmark with a field mapping, read as `readDatasetText` reads it (a
 * regular file, at most `limits.maxBytes`, UTF-8), each line checked as `parseJsonlBenchmark` does.
 */
export function loadJsonlBenchmark(path: string, fields?: FieldMapping, limits?: DatasetReadLimits, duplicateIds: DuplicateIdPolicy = 'refuse'): BenchmarkItem[] {
  const resolved = resolveDatasetReadLimits(limits);
  return parseJsonlBenchmark(readDatasetText(path, resolved), path, fields, resolved, duplicateIds);
}

/**
 * Loads any supported file by its extension: `.csv` (AIME CSV fields), `.json` (AgentFlow
 * JSON fields), `.jsonl` (`id`, `question`, `answer`). Pass `fields` to map other names,
 * `limits` to change what the file is checked against before it is parsed, and `duplicateIds`
 * for a file whose ids repeat.
 */
export function loadBenchmark(path: string, fields?: FieldMapping, limits?: DatasetReadLimits, duplicateIds: DuplicateIdPolicy = 'refuse'): BenchmarkItem[] {
  const extension = extname(path).toLowerCase();
  switch (extension) {
    case '.csv':
      return loadCsvBenchmark(path, fields, limits, duplicateIds);
    case '.json':
      return loadAgentFlowJson(path, fields, limits, duplicateIds);
    case '.jsonl':
    case '.ndjson':
      return loadJsonlBenchmark(path, fields, limits, duplicateIds);
    default:
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Unsupported benchmark file ${path}: expected .csv, .json or .jsonl, got ${describeValue(extension || '(none)')}.`,
        details: { path },
      });
  }
}
