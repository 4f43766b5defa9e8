import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { loadAgentFlowJson, loadBenchmark, loadCsvBenchmark, loadJsonlBenchmark, parseAgentFlowJson } from './load-benchmark';
import { loadDataset } from './load-dataset';
import { selectItems } from './select-items';

const fixture = (name: string) => join(__dirname, '__fixtures__', name);

describe('benchmark loaders', () => {
  it('reads the AIME CSV with multi-line quoted LaTeX problems and years from the ids', () => {
    const items = loadCsvBenchmark(fixture('mini-aime.csv'));
    expect(items.map((item) => item.id)).toEqual(['1990_AIME_1', '1990_AIME_2', '2001_AIME_I_3', '2024_AIME_II_9', '2025_AIME_I_1']);
    const multiLine = items[2];
    expect(multiLine?.question).toBe('A "quoted" word, a comma, and\na second line: find $\\frac{1}{2} + \\dfrac{3}{2}$ , then\nmultiply by $7$ .');
    expect(multiLine?.answer).toBe('14');
    expect(items.map((item) => item.year)).toEqual([1990, 1990, 2001, 2024, 2025]);
  });

  it('reads AgentFlow JSON: pid as id, the appended answer instruction cut from the question, numeric answers as text', () => {
    const [first, second] = loadAgentFlowJson(fixture('mini-benchmark.json'));
    expect(first?.id).toBe('0');
    expect(first?.question.endsWith('6,000,000.\\]')).toBe(true);
    expect(first?.prompt).toContain('When ready, output the final answer');
    expect(first?.answer).toBe('601');
    expect(second?.answer).toBe('204');
    expect(first?.metadata).toEqual({ idx: 0, image: null });
  });

  it('reads Game of 24 numbers and every accepted expression, whether stored as lists or as list text', () => {
    const [first, second] = loadAgentFlowJson(fixture('mini-gameof24.json'));
    expect(first?.numbers).toEqual([1, 1, 1, 8]);
    expect(first?.references).toEqual(['(1+1+1)×8']);
    expect(second?.numbers).toEqual([4, 7, 8, 8]);
    expect(second?.references).toEqual(['(7-(8÷8))×4', '4×(7-8÷8)']);
  });

  it('reads JSONL with a field mapping, including multiple references and choices', () => {
    const items = loadJsonlBenchmark(fixture('mini-qa.jsonl'), { id: 'uid', question: 'prompt_text', answer: 'gold', choices: 'options' });
    expect(items[0]?.references).toEqual(['Seine', 'the Seine River']);
    expect(items[0]?.choices).toBeUndefined();
    expect(items[1]?.choices).toEqual(['4', '7', '9']);
  });

  it('picks the loader by extension and names a missing field and the fields present', () => {
    expect(loadBenchmark(fixture('mini-aime.csv'))).toHaveLength(5);
    try {
      loadBenchmark(fixture('mini-qa.jsonl'));
      expect.unreachable();
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'SCHEMA_VALIDATION')).toBe(true);
      expect((error as Error).message).toMatch(/field "id" is missing \(fields present: uid, prompt_text, gold, options\)/);
    }
    expect(() => loadBenchmark('data.parquet')).toThrow(/expected \.csv, \.json or \.jsonl, got "\.parquet"/);
    expect(() => loadBenchmark('/nonexistent/aime.csv')).toThrow(/Cannot read benchmark file \/nonexistent\/aime\.csv/);
  });

  it('rejects duplicate ids and a JSON file that is not an array', () => {
    expect(() => parseAgentFlowJson('[{"pid":"1","question":"q","answer":1},{"pid":"1","question":"r","answer":2}]', 'dup.json')).toThrow(
      /dup\.json: id "1" appears more than once/,
    );
    expect(() => parseAgentFlowJson('{"pid":"1"}', 'obj.json')).toThrow(/obj\.json: expected a JSON array/);
  });

  it('selects splits by year range and loads a config dataset source with years and limit', () => {
    const items = loadCsvBenchmark(fixture('mini-aime.csv'));
    expect(selectItems(items, { years: { from: 1983, to: 2023 } }).map((item) => item.id)).toEqual(['1990_AIME_1', '1990_AIME_2', '2001_AIME_I_3']);
    expect(selectItems(items, { idPattern: /^2024_/ }).map((item) => item.id)).toEqual(['2024_AIME_II_9']);
    expect(() => selectItems(items, { years: { from: 2024, to: 1983 } })).toThrow(/Year range 2024-1983 is empty/);
    const directory = mkdtempSync(join(tmpdir(), 'eval-dataset-'));
    const path = join(directory, 'aime.csv');
    writeFileSync(path, 'id,problem,answer\n1983_AIME_1,p1,1\n1984_AIME_1,p2,2\n2024_AIME_I_1,p3,3\n');
    expect(loadDataset({ path, format: 'aime-csv', years: [1983, 2023], limit: 1 }).map((item) => item.id)).toEqual(['1983_AIME_1']);
  });
});
