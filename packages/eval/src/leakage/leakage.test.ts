import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { loadAgentFlowJson, loadCsvBenchmark } from '../datasets/load-benchmark';
import { assertNoLeakage, withoutLeakedItems } from './assert-no-leakage';
import { findNearDuplicates } from './find-near-duplicates';
import { normalizeForLeakage } from './normalize-text';

const fixture = (name: string) => join(__dirname, '..', 'datasets', '__fixtures__', name);

describe('normalizeForLeakage', () => {
  it('makes copies that differ in whitespace, case, punctuation and LaTeX markup equal', () => {
    const a = 'Find $a^2 b + \\dfrac{1}{2}$ , where $ABC$ is a triangle.When ready, output the final answer enclosed in <answer> and </answer> tags.';
    const b = 'find $a^{2}b+\\frac12$ where ABC is a  TRIANGLE';
    expect(normalizeForLeakage(a)).toBe('find a 2 b frac 1 2 where a b c is a triangle');
    expect(normalizeForLeakage(b)).toBe('find a 2 b frac 1 2 where a b c is a triangle');
  });

  it('removes thousands separators and figure code, unwraps text commands', () => {
    expect(normalizeForLeakage('$6{,}000{,}000$ and 6,000,000')).toBe('6000000 and 6000000');
    expect(normalizeForLeakage('See [asy] draw((0,0)--(1,1)); [/asy] the \\textit{figure}.')).toBe('see the figure');
    expect(normalizeForLeakage('$\\left( x \\right)$')).toBe('x');
  });
});

describe('findNearDuplicates', () => {
  const train = loadCsvBenchmark(fixture('mini-aime.csv'));
  const test = loadAgentFlowJson(fixture('mini-benchmark.json'));

  it('finds a test problem hidden under another id with different markup, and nothing else', () => {
    const pairs = findNearDuplicates(train, test);
    expect(pairs).toEqual([{ train_id: '2024_AIME_II_9', test_id: '0', score: 1 }]);
  });

  it('scores partial copies between 0 and 1, and sorts by score', () => {
    const base = 'a farmer has seven sheep and nine goats and sells three of the goats at the market on sunday';
    const pairs = findNearDuplicates(
      [
        { id: 'copy', question: base },
        { id: 'half', question: `${base.split(' ').slice(0, 10).join(' ')} then buys a red bicycle for his daughter who likes riding` },
        { id: 'other', question: 'compute the area of a regular hexagon with side length two' },
      ],
      [{ id: 't', question: base.toUpperCase() }],
      { threshold: 0.1 },
    );
    expect(pairs.map((pair) => pair.train_id)).toEqual(['copy', 'half']);
    expect(pairs[0]?.score).toBe(1);
    expect(pairs[1]?.score).toBeGreaterThan(0.1);
    expect(pairs[1]?.score).toBeLessThan(0.7);
    const jaccard = findNearDuplicates([{ id: 'long', question: `${base} and more words follow here to dilute it a lot` }], [{ id: 't', question: base }], {
      score: 'jaccard',
      threshold: 0,
    });
    expect(jaccard[0]?.score).toBeLessThan(0.8);
  });

  it('does not call templated questions copies because they share a name, but does catch a verbatim copy', () => {
    const names = ['Goro', 'Papo', 'Riri', 'Lebe', 'Robi', 'Tufe', 'Fodo', 'Vone'];
    const train = names.map((name) => ({ id: name, question: `How many cats and dogs does ${name} have?` }));
    // After the template's shingles are dropped as boilerplate, only "does goro have" is shared:
    // a single shingle must not make an overlap of 1.
    expect(findNearDuplicates(train, [{ id: 't1', question: 'How many more dogs does Goro have than Papo?' }])).toEqual([]);
    const copies = findNearDuplicates(train, [{ id: 't2', question: ' how Many cats,  and dogs does goro Have !' }]);
    expect(copies[0]).toEqual({ train_id: 'Goro', test_id: 't2', score: 1 });
    // The same template about another name is textually close too (0.5): text alone cannot
    // tell templated questions apart, which is why the task world splits by construction.
    expect(copies.slice(1).every((pair) => pair.score < 1)).toBe(true);
  });

  it('rejects a threshold outside [0, 1] by name', () => {
    expect(() => findNearDuplicates([], [], { threshold: 2 })).toThrow(/threshold: Too big/);
  });
});

describe('assertNoLeakage', () => {
  it('refuses a leaking split with DATA_LEAKAGE naming the pairs, unless leakage is allowed', () => {
    const train = loadCsvBenchmark(fixture('mini-aime.csv'));
    const test = loadAgentFlowJson(fixture('mini-benchmark.json'));
    try {
      assertNoLeakage(train, test, { trainName: 'aime.csv', testName: 'aime24.json' });
      expect.unreachable();
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'DATA_LEAKAGE')).toBe(true);
      expect((error as Error).message).toMatch(/^1 aime24\.json item\(s\) leak into aime\.csv: 0 ~ 2024_AIME_II_9 \(1\.00\)/);
    }
    const pairs = assertNoLeakage(train, test, { allowLeakage: true });
    expect(pairs).toHaveLength(1);
    const clean = withoutLeakedItems(train, pairs);
    expect(clean.map((item) => item.id)).not.toContain('2024_AIME_II_9');
    expect(assertNoLeakage(clean, test)).toEqual([]);
  });
});
