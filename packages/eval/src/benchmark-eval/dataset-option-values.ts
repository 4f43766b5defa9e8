import { AgentFlowError, describeValue, isPlainObject, parseOverride } from '@agentflow/core';
import { fieldMappingSchema } from '../datasets/field-mapping';
import { type BenchmarkEvalSettings, datasetFormatSchema } from './benchmark-eval-settings';
import { datasetFormatOf } from './resolve-benchmark-eval-settings';

type DatasetFormat = BenchmarkEvalSettings['data']['format'];

function invalid(option: string, text: string, expected: string): AgentFlowError {
  return new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `${option} must be ${expected}, got ${describeValue(text)}.`,
    details: { option, value: text },
  });
}

/**
 * A year range as a user types it: `1983,2023`, `1983-2023` or `2024` (one year), inclusive,
 * for `data.years`. INVALID_ARGUMENT names `option` (the flag or key the text came from).
 */
export function parseYearRange(text: string, option = '--years'): [number, number] {
  const parts = text.split(/[,-]/).map((part) => part.trim());
  const years = parts.map(Number);
  if (parts.length > 2 || years.some((year) => !Number.isInteger(year) || year < 0) || parts.some((part) => part === '')) {
    throw invalid(option, text, 'a year or an inclusive range FROM,TO (e.g. 1983,2023)');
  }
  const [from, to = from] = years as [number, number?];
  if (from > to) throw invalid(option, text, 'a range whose first year is not after the second');
  return [from, to];
}

/**
 * A field mapping as a user types it, `id=pid,question=problem`: the file's name for each field
 * the loaders read ({@link fieldMappingSchema}), for `data.fields`.
 */
export function parseFieldMapping(text: string, option = '--fields'): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const equals = pair.indexOf('=');
    const key = pair.slice(0, equals).trim();
    const value = pair.slice(equals + 1).trim();
    if (equals < 0 || key === '' || value === '') {
      throw invalid(option, text, 'FIELD=NAME pairs separated by commas (e.g. id=pid,question=question,answer=answer)');
    }
    fields[key] = value;
  }
  const parsed = fieldMappingSchema.safeParse(fields);
  if (!parsed.success) {
    const known = Object.keys(fieldMappingSchema.shape).join(', ');
    throw invalid(option, text, `pairs whose FIELD is one of ${known} (${parsed.error.issues.map((issue) => issue.message).join('; ')})`);
  }
  return fields;
}

/** A dataset format as a user types it, or, when `text` is undefined, the one `path`'s extension implies ({@link datasetFormatOf}). */
export function parseDatasetFormat(text: string | undefined, path: string, option = '--format'): DatasetFormat {
  if (text === undefined) return datasetFormatOf(path);
  const parsed = datasetFormatSchema.safeParse(text);
  if (!parsed.success) throw invalid(option, text, `one of ${datasetFormatSchema.options.join(', ')}`);
  return parsed.data;
}

/**
 * A tools block as a user types it on a command line: YAML (as `--set` values are), a mapping
 * such as `{wikipedia: {}, webSearch: {apiKeyEnv: TAVILY_API_KEY}}`, for the settings' `tools`
 * (whose schema checks the keys). INVALID_ARGUMENT names `option` when it is not a YAML mapping.
 */
export function parseToolsOption(text: string, option = '--tools'): Record<string, unknown> {
  const expected = "a YAML mapping of the tools block, e.g. '{wikipedia: {}, webSearch: {apiKeyEnv: TAVILY_API_KEY}}'";
  let value: unknown;
  try {
    value = parseOverride(`tools=${text}`).value;
  } catch (cause) {
    const { message, details } = invalid(option, text, expected);
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${message} (${(cause as Error).message})`, cause, details });
  }
  if (!isPlainObject(value)) throw invalid(option, text, expected);
  return value;
}
