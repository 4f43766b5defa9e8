import { extname } from 'node:path';
import { AgentFlowError, describeValue } from '@agentflow/core';
import { type BenchmarkEvalSettings, datasetFormatSchema, fieldMappingSchema } from '@agentflow/eval';

type DatasetFormat = BenchmarkEvalSettings['data']['format'];

function invalid(option: string, text: string, expected: string): AgentFlowError {
  return new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `${option} must be ${expected}, got ${describeValue(text)}.`,
    details: { option, value: text },
  });
}

/** `--years 1983,2023`, `1983-2023` or `2024`: an inclusive range. */
export function parseYears(text: string): [number, number] {
  const parts = text.split(/[,-]/).map((part) => part.trim());
  const years = parts.map(Number);
  if (parts.length > 2 || years.some((year) => !Number.isInteger(year) || year < 0) || parts.some((part) => part === '')) {
    throw invalid('--years', text, 'a year or an inclusive range FROM,TO (e.g. 1983,2023)');
  }
  const [from, to = from] = years as [number, number?];
  if (from > to) throw invalid('--years', text, 'a range whose first year is not after the second');
  return [from, to];
}

/** `--fields id=pid,question=problem`: the file's name for each field the loaders read. */
export function parseFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const equals = pair.indexOf('=');
    const key = pair.slice(0, equals).trim();
    const value = pair.slice(equals + 1).trim();
    if (equals < 0 || key === '' || value === '') {
      throw invalid('--fields', text, 'FIELD=NAME pairs separated by commas (e.g. id=pid,question=question,answer=answer)');
    }
    fields[key] = value;
  }
  const parsed = fieldMappingSchema.safeParse(fields);
  if (!parsed.success) {
    const known = Object.keys(fieldMappingSchema.shape).join(', ');
    throw invalid('--fields', text, `pairs whose FIELD is one of ${known} (${parsed.error.issues.map((issue) => issue.message).join('; ')})`);
  }
  return fields;
}

/** `--format`, or the format its extension implies (.json, .csv, .jsonl). */
export function parseFormat(text: string | undefined, path: string): DatasetFormat {
  if (text !== undefined) {
    const parsed = datasetFormatSchema.safeParse(text);
    if (!parsed.success) throw invalid('--format', text, `one of ${datasetFormatSchema.options.join(', ')}`);
    return parsed.data;
  }
  const byExtension: Record<string, DatasetFormat> = { '.json': 'agentflow-json', '.csv': 'aime-csv', '.jsonl': 'jsonl' };
  const format = byExtension[extname(path).toLowerCase()];
  if (!format) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--data ${path}: cannot tell the format from the extension ${describeValue(extname(path))}; give --format ${datasetFormatSchema.options.join('|')}.`,
      details: { path },
    });
  }
  return format;
}

/** A number option at or above `minimum` (`--temperature 0.7`). */
export function parseNumber(option: string, text: string, minimum: number): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < minimum) throw invalid(option, text, `a number of at least ${minimum}`);
  return value;
}

/** An integer option, negative allowed (`--seed`). */
export function parseInteger(option: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isInteger(value)) throw invalid(option, text, 'an integer');
  return value;
}

/** One of a fixed set of words (`--template`, `--response-format`). */
export function parseChoice<const T extends string>(option: string, text: string, choices: readonly T[]): T {
  if (!(choices as readonly string[]).includes(text)) throw invalid(option, text, `one of ${choices.join(', ')}`);
  return text as T;
}
