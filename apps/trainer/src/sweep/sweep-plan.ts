import { AgentFlowError, parseOverride } from '@agentflow/core';
import { parseSeedList, readSweepPlan, recordSweepPlan } from '@agentflow/eval';
import { CREDIT_OPTIONS } from '../pipeline/open-run';
import { z } from 'zod';

/** What a sweep runs: one config (with its overrides) per seed and credit. Written to `sweep.json`. */
const sweepPlanSchema = z
  .object({
    version: z.literal(1),
    config: z.string().nullable().describe('The config file, or null for the embedded default.'),
    set: z.array(z.string()).describe('`--set` overrides applied to every run (before its seed).'),
    seeds: z.array(z.number().int().nonnegative()).min(1),
    credits: z.array(z.string()).nullable().describe("`--credit` values, one arm each; null: one arm with the config's own credit."),
  })
  .strict();
export type SweepPlan = z.infer<typeof sweepPlanSchema>;


/** Parses `process,outcome` into distinct `--credit` values. */
export function parseCredits(text: string): string[] {
  const credits = [...new Set(text.split(',').map((part) => part.trim()))];
  const unknown = credits.find((credit) => !CREDIT_OPTIONS.includes(credit));
  if (unknown !== undefined || credits.length === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `--credit ${JSON.stringify(text)}: expected a comma-separated list of ${CREDIT_OPTIONS.join(', ')}; ${JSON.stringify(unknown ?? '')} is not one.` });
  }
  return credits;
}

/** The plan of a sweep from its options; `--set seed=...` is refused (the sweep sets each run's seed). */
export function sweepPlanOf(options: { config?: string; set?: string[]; seeds: string; credit?: string }): SweepPlan {
  const set = options.set ?? [];
  const seedOverride = set.find((text) => parseOverride(text).path.join('.') === 'seed');
  if (seedOverride !== undefined) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `--set ${JSON.stringify(seedOverride)}: a sweep sets each run's seed from --seeds; drop this --set.` });
  }
  return { version: 1, config: options.config ?? null, set, seeds: parseSeedList(options.seeds), credits: options.credit === undefined ? null : parseCredits(options.credit) };
}

const planFile = { command: 'agentflow sweep' };

/** Records `plan` in `dir`, or checks it against the one there (@agentflow/eval recordSweepPlan). */
export const recordPlan = (dir: string, plan: SweepPlan) => recordSweepPlan(dir, plan, sweepPlanSchema, planFile);

/** Reads the plan of a sweep directory (`--resume DIR`). */
export const readPlan = (dir: string): SweepPlan => readSweepPlan(dir, sweepPlanSchema, planFile);
