import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { parseFields, parseFormat, parseYears } from './parse-option-values';

const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return AgentFlowError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
  }
  return 'no error';
};

describe('the option values of agentflow eval', () => {
  it('reads --years as a year or an inclusive range', () => {
    expect(parseYears('1983,2023')).toEqual([1983, 2023]);
    expect(parseYears('1983-2023')).toEqual([1983, 2023]);
    expect(parseYears('2024')).toEqual([2024, 2024]);
    expect(codeOf(() => parseYears('2023,1983'))).toContain('INVALID_ARGUMENT: --years must be a range');
    expect(codeOf(() => parseYears('last'))).toContain('got "last"');
  });

  it('reads --fields as FIELD=NAME pairs the loaders know', () => {
    expect(parseFields('id=pid,question=problem')).toEqual({ id: 'pid', question: 'problem' });
    expect(codeOf(() => parseFields('id'))).toContain('FIELD=NAME pairs');
    expect(codeOf(() => parseFields('title=name'))).toContain('FIELD is one of id, question, answer');
  });

  it('takes the format from --format or the extension', () => {
    expect(parseFormat(undefined, 'data/aime24.json')).toBe('agentflow-json');
    expect(parseFormat(undefined, 'data/aime.CSV')).toBe('aime-csv');
    expect(parseFormat('jsonl', 'data/x.txt')).toBe('jsonl');
    expect(codeOf(() => parseFormat(undefined, 'data/x.txt'))).toContain('give --format agentflow-json|aime-csv|jsonl');
  });
});
