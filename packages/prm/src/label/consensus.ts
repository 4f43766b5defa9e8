import { AgentFlowError, assertNever } from '@agentflow/core';
import { z } from 'zod';
import type { PrmExample } from '../example/prm-example';

/**
 * When judge and Monte-Carlo agree. The judge calls a step right when its score is at
 * least `judgeThreshold`; Monte-Carlo calls it right when at least one completion succeeds
 * (`monteCarloThreshold: 'any'`, the hard label Qwen filters with, arXiv 2501.07301) or
 * when the fraction that succeed is at least a number. A step is kept when both call it
 * right or both call it wrong.
 */
export const consensusSettingsSchema = z
  .object({
    judgeThreshold: z.number().min(0).max(1).default(0.5).describe('Judge score at or above which a step is right.'),
    monteCarloThreshold: z
      .union([z.literal('any'), z.number().min(0).max(1)])
      .default('any')
      .describe("Monte-Carlo success fraction at or above which a step is right; 'any' = at least one success (Qwen)."),
    label: z
      .enum(['judge', 'monte-carlo', 'mean'])
      .default('judge')
      .describe("The label kept for an agreed step: the judge's score (the reference PRM's target), MC's, or their mean."),
  })
  .strict();
export type ConsensusSettings = z.input<typeof consensusSettingsSchema>;

export interface ConsensusResult {
  kept: PrmExample[];
  /** Steps labelled by both whose verdicts differed. */
  disagreed: number;
  /** Steps labelled by only one of the two. */
  unmatched: number;
}

function monteCarloFraction(example: PrmExample): number {
  const { samples, successes } = example.provenance;
  // Format errors carry samples 0 and label 0; otherwise the counts give the exact fraction.
  return samples !== undefined && successes !== undefined && samples > 0 ? successes / samples : example.label;
}

/** Keeps the steps on which the judge and Monte-Carlo agree (see `consensusSettingsSchema`). */
export function consensusFilter(
  judged: readonly PrmExample[],
  monteCarlo: readonly PrmExample[],
  settings: ConsensusSettings = {},
): ConsensusResult {
  const parsed = consensusSettingsSchema.parse(settings);
  const byId = new Map(monteCarlo.map((example) => [example.id, example]));
  for (const example of monteCarlo) {
    if (example.provenance.labeller !== 'monte-carlo') {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `consensusFilter: step ${example.id} in the Monte-Carlo set was labelled by ${example.provenance.labeller}.`,
      });
    }
  }
  const kept: PrmExample[] = [];
  let disagreed = 0;
  let matched = 0;
  for (const judge of judged) {
    const mc = byId.get(judge.id);
    if (!mc) continue;
    matched++;
    const fraction = monteCarloFraction(mc);
    const judgeRight = judge.label >= parsed.judgeThreshold;
    const mcRight = parsed.monteCarloThreshold === 'any' ? fraction > 0 : fraction >= parsed.monteCarloThreshold;
    if (judgeRight !== mcRight) {
      disagreed++;
      continue;
    }
    kept.push({ ...judge, label: keptLabel(parsed.label, judge.label, fraction), provenance: {
      ...judge.provenance,
      labeller: 'consensus',
      ...(mc.provenance.samples === undefined ? {} : { samples: mc.provenance.samples }),
      ...(mc.provenance.successes === undefined ? {} : { successes: mc.provenance.successes }),
    } });
  }
  return { kept, disagreed, unmatched: judged.length + monteCarlo.length - 2 * matched };
}

function keptLabel(kind: 'judge' | 'monte-carlo' | 'mean', judge: number, monteCarlo: number): number {
  switch (kind) {
    case 'judge':
      return judge;
    case 'monte-carlo':
      return monteCarlo;
    case 'mean':
      return (judge + monteCarlo) / 2;
    default:
      return assertNever(kind, 'consensus label');
  }
}
