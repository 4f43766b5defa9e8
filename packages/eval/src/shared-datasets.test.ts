/**
 * Runs the loaders, checkers and leakage check on the real benchmark files in
 * `../shared/datasets` (relative to the repository root), or in `AGENTFLOW_DATASETS`.
 * The project never commits them; when the folder is absent this suite says so and skips.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkAnswer } from './answers/check-answer';
import { checkGameOf24 } from './answers/game-of-24';
import type { BenchmarkItem } from './datasets/benchmark-item';
import { loadAgentFlowJson, loadCsvBenchmark } from './datasets/load-benchmark';
import { selectItems } from './datasets/select-items';
import { assertNoLeakage } from './leakage/assert-no-leakage';
import { findNearDuplicates } from './leakage/find-near-duplicates';

const folder = process.env.AGENTFLOW_DATASETS ?? resolve(__dirname, '..', '..', '..', '..', 'shared', 'datasets');
const present = existsSync(join(folder, 'aime_1983_2024.csv'));
if (!present) {
  console.log(`shared-datasets: SKIPPED, no benchmark files at ${folder} (set AGENTFLOW_DATASETS to run this suite).`);
}

/** An independent oracle for Game of 24: JavaScript floating point on the same expression. */
function floatValue(expression: string): number {
  const code = expression.replace(/×/g, '*').replace(/÷/g, '/');
  if (!/^[\d+\-*/() .]+$/.test(code)) throw new Error(`unexpected characters in ${expression}`);
  return Function(`"use strict"; return (${code});`)() as number;
}

const literals = (expression: string) => (expression.match(/\d+/g) ?? []).map(Number);

describe.skipIf(!present)(`shared datasets in ${folder}`, () => {
  const csv = present ? loadCsvBenchmark(join(folder, 'aime_1983_2024.csv')) : [];
  const aime24 = present ? loadAgentFlowJson(join(folder, 'aime24.json')) : [];
  const amc23 = present ? loadAgentFlowJson(join(folder, 'amc23.json')) : [];
  const game = present ? loadAgentFlowJson(join(folder, 'gameof24.json')) : [];

  it('loads every file with the documented counts', () => {
    expect(csv).toHaveLength(982);
    expect(selectItems(csv, { years: { from: 1983, to: 2023 } })).toHaveLength(918);
    expect(selectItems(csv, { years: { from: 2024, to: 2024 } })).toHaveLength(34);
    expect(selectItems(csv, { years: { from: 2025, to: 2025 } })).toHaveLength(30);
    expect(aime24).toHaveLength(30);
    expect(amc23).toHaveLength(40);
    expect(game).toHaveLength(300);
    // A multi-line problem with quotes and commas survives CSV parsing intact.
    expect(csv.find((item) => item.id === '1983_AIME_4')?.question).toContain('label("$A$",A,NE);');
    expect(aime24.every((item) => !item.question.includes('When ready, output'))).toBe(true);
    expect(game.every((item) => item.numbers?.length === 4)).toBe(true);
  });

  it('every reference answer of AIME 2024 and AMC 2023 checks as correct, and the answer plus one as wrong', () => {
    for (const item of [...aime24, ...amc23]) {
      expect(checkAnswer(`<answer>${item.answer}</answer>`, item.references, { type: 'math' }).correct, item.id).toBe(true);
      expect(checkAnswer(`\\boxed{${Number(item.answer) + 1}}`, item.references, { type: 'math' }).correct, item.id).toBe(false);
    }
    // The CSV's answers include LaTeX units such as 336^\circ; they read as numbers.
    const degrees = csv.find((item) => item.answer.includes('circ'));
    expect(degrees && checkAnswer('<answer>336</answer>', degrees.references, { type: 'math' }).correct).toBe(true);
  });

  it('every Game of 24 reference expression checks as correct', () => {
    let expressions = 0;
    for (const item of game) {
      for (const reference of item.references) {
        expressions++;
        expect(Math.abs(floatValue(reference) - 24), reference).toBeLessThan(1e-9);
        expect(checkGameOf24(reference, item.numbers ?? []), `${item.id}: ${reference}`).toEqual({ correct: true });
      }
    }
    console.log(`shared-datasets: ${expressions} Game of 24 reference expressions over ${game.length} items all check as correct.`);
  });

  it('corrupted Game of 24 answers (a number used twice, a wrong result) check as wrong', () => {
    let twice = 0;
    let wrongResult = 0;
    for (const item of game) {
      const numbers = item.numbers ?? [];
      const reference = item.references[0] as string;
      // A number used twice: the first literal replaced by another literal of the expression.
      const used = literals(reference);
      const other = used.find((value) => value !== used[0]);
      if (other !== undefined) {
        const corrupted = reference.replace(/\d+/, String(other));
        expect(checkGameOf24(corrupted, numbers), `${item.id}: ${corrupted}`).toMatchObject({ correct: false, reason: expect.stringMatching(/more often than given|does not use/) });
        twice++;
      }
      // A wrong result: one operator changed, the numbers untouched.
      const swapped = reference.replace(/[+\-×÷/]/, (operator) => ({ '+': '×', '-': '+', '×': '+', '÷': '-', '/': '-' })[operator] ?? '+');
      if (Math.abs(floatValue(swapped) - 24) > 1e-9) {
        expect(checkGameOf24(swapped, numbers), `${item.id}: ${swapped}`).toMatchObject({ correct: false, reason: expect.stringMatching(/^evaluates to .*, not 24$/) });
        wrongResult++;
      }
    }
    console.log(`shared-datasets: rejected ${twice} answers with a number used twice and ${wrongResult} with a wrong result.`);
    expect(twice).toBeGreaterThan(250);
    expect(wrongResult).toBeGreaterThan(250);
  });

  it('dedup finds the AIME 2024 problems hidden among the CSV 2024 rows, each pair with the same answer', () => {
    const pairs = findNearDuplicates(csv, aime24);
    const byId = new Map<string, BenchmarkItem>([...csv, ...aime24.map((item) => ({ ...item, id: `json:${item.id}` }))].map((item) => [item.id, item]));
    console.log(`shared-datasets: ${pairs.length} CSV rows are AIME 2024 problems of aime24.json: ${pairs.map((pair) => `${pair.train_id}~${pair.test_id} (${pair.score})`).join(', ')}`);
    expect(pairs.length).toBe(14);
    expect(new Set(pairs.map((pair) => pair.test_id)).size).toBe(pairs.length);
    for (const pair of pairs) {
      expect(pair.train_id).toMatch(/^2024_AIME_/);
      expect(byId.get(pair.train_id)?.answer, pair.train_id).toBe(byId.get(`json:${pair.test_id}`)?.answer);
    }
    // An exact-string dedup misses most of them: the texts differ in whitespace and markup.
    const exact = new Set(aime24.map((item) => item.question));
    expect(csv.filter((item) => exact.has(item.question)).length).toBeLessThan(pairs.length);
  });

  it('reports no pair between the 1983-2023 rows and aime24.json, with a wide margin', () => {
    const old = selectItems(csv, { years: { from: 1983, to: 2023 } });
    expect(findNearDuplicates(old, aime24)).toEqual([]);
    expect(assertNoLeakage(old, aime24)).toEqual([]);
    const closest = findNearDuplicates(old, aime24, { threshold: 0 })[0];
    console.log(`shared-datasets: closest 1983-2023 row to aime24.json scores ${closest?.score} (${closest?.train_id}~${closest?.test_id}); the threshold is 0.5.`);
    expect(closest?.score ?? 0).toBeLessThan(0.4);
    // A split by year prefix alone leaks: the 2024 rows of the CSV contain aime24 problems.
    expect(() => assertNoLeakage(selectItems(csv, { years: { from: 2024, to: 2024 } }), aime24)).toThrow(/leak into train/);
  });
});
