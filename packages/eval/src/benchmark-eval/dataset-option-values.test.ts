import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { parseDatasetFormat, parseFieldMapping, parseYearRange } from './dataset-option-values';

const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return AgentFlowError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
  }
  return 'no error';
};

describe('dataset settings as a user types them', () => {
  it('reads a year or an inclusive range', () => {
    expect(parseYearRange('1983,2023')).toEqual([1983, 2023]);
    expect(parseYearRange('1983-2023')).toEqual([1983, 2023]);
    expect(parseYearRange('2024')).toEqual([2024, 2024]);
    expect(codeOf(() => parseYearRange('2023,1983'))).toContain('INVALID_ARGUMENT: --years must be a range');
    expect(codeOf(() => parseYearRange('last', 'data.years'))).toContain('data.years must be a year or an inclusive range FROM,TO (e.g. 1983,2023), got "last"');
  });

  it('reads FIELD=NAME pairs the loaders know', () => {
    expect(parseFieldMapping('id=pid,question=problem')).toEqual({ id: 'pid', question: 'problem' });
    expect(codeOf(() => parseFieldMapping('id'))).toContain('FIELD=NAME pairs');
    expect(codeOf(() => parseFieldMapping('title=name'))).toContain('FIELD is one of id, question, answer');
  });

  it('takes the format as given or from the extension', () => {
    expect(parseDatasetFormat(undefined, 'data/aime24.json')).toBe('agentflow-json');
    expect(parseDatasetFormat(undefined, 'data/aime.CSV')).toBe('aime-csv');
    expect(parseDatasetFormat('jsonl', 'data/x.txt')).toBe('jsonl');
    expect(codeOf(() => parseDatasetFormat('yaml', 'data/x.txt'))).toContain('--format must be one of agentflow-json, aime-csv, jsonl, got "yaml"');
    expect(codeOf(() => parseDatasetFormat(undefined, 'data/x.txt'))).toContain('data/x.txt: cannot tell the format from the extension ".txt"; give the format (agentflow-json, aime-csv, jsonl): data.format, or --format on the command line.');
  });
});
