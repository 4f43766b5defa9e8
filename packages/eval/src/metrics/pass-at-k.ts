import { AgentFlowError } from '@agentflow/core';

/**
 * Unbiased pass@k from n samples of which c are correct (Chen et al. 2021, "Evaluating
 * Large Language Models Trained on Code"): 1 - C(n-c, k) / C(n, k), computed as a product
 * so it stays exact-ish for large n.
 */
export function passAtK(samples: number, correct: number, k: number): number {
  if (![samples, correct, k].every(Number.isInteger) || samples < 1 || correct < 0 || correct > samples || k < 1 || k > samples) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `passAtK needs integers with 0 <= correct <= samples and 1 <= k <= samples, got samples=${samples}, correct=${correct}, k=${k}.`,
      details: { samples, correct, k },
    });
  }
  if (samples - correct < k) return 1;
  let allWrong = 1;
  for (let index = samples - correct + 1; index <= samples; index++) allWrong *= 1 - k / index;
  return 1 - allWrong;
}

function checkGrid(results: readonly (readonly boolean[])[], what: string): void {
  if (results.length === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${what} needs at least one item.` });
  }
  results.forEach((row, index) => {
    if (row.length === 0) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${what}: item ${index} has no samples.`, details: { index } });
    }
  });
}

/** Mean unbiased pass@k over items; `results[item][sample]` is whether that sample was correct. */
export function meanPassAtK(results: readonly (readonly boolean[])[], k: number): number {
  checkGrid(results, 'meanPassAtK');
  const total = results.reduce((sum, row) => sum + passAtK(row.length, row.filter(Boolean).length, k), 0);
  return total / results.length;
}

/**
 * avg@k: the mean over items of the fraction of the first k samples that are correct
 * (AgentFlow reports avg@k next to pass@k to show the expected single-try accuracy).
 */
export function avgAtK(results: readonly (readonly boolean[])[], k: number): number {
  checkGrid(results, 'avgAtK');
  results.forEach((row, index) => {
    if (row.length < k) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `avgAtK: item ${index} has ${row.length} samples, fewer than k=${k}.`,
        details: { index, samples: row.length, k },
      });
    }
  });
  return results.reduce((sum, row) => sum + row.slice(0, k).filter(Boolean).length / k, 0) / results.length;
}
