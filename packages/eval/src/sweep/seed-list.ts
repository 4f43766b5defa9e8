import { AgentFlowError } from '@agentflow/core';

/** Most seeds a list may name. */
const MAX_SEEDS = 1000;

/**
 * Seeds as a user types them, `0-4`, `0,2,7` or `3`: distinct non-negative integers in the order
 * given (at most 1,000). INVALID_ARGUMENT names `option` and the part that is not a seed.
 */
export function parseSeedList(text: string, option = '--seeds'): number[] {
  const seeds: number[] = [];
  for (const part of text.split(',')) {
    const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    const [from, to] = match ? [Number(match[1]), Number(match[2] ?? match[1])] : [Number.NaN, Number.NaN];
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from || to - from >= MAX_SEEDS) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `${option} ${JSON.stringify(text)}: expected seeds like 0-4, 0,2,7 or 3 (non-negative integers, ranges low-high of at most ${MAX_SEEDS}); ${JSON.stringify(part)} is not one.`,
      });
    }
    for (let seed = from; seed <= to; seed++) if (!seeds.includes(seed)) seeds.push(seed);
  }
  if (seeds.length > MAX_SEEDS) throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${option} ${JSON.stringify(text)} names ${seeds.length} seeds; at most ${MAX_SEEDS}.` });
  return seeds;
}
