import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, parseOverride, readConfigFile, writeFileAtomic } from '@agentflow/core';
import { parseSeedList } from '@agentflow/eval';
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

/** Where the plan of a sweep directory is kept. */
export const sweepPlanPath = (dir: string) => join(dir, 'sweep.json');

/**
 * Records `plan` in `dir`, or checks it against the one recorded there: a sweep directory
 * holds one plan, so re-running the same command continues it and a different one is refused.
 */
export function recordSweepPlan(dir: string, plan: SweepPlan): void {
  const path = sweepPlanPath(dir);
  if (!existsSync(path)) {
    writeFileAtomic(path, `${JSON.stringify(plan, null, 2)}\n`);
    return;
  }
  const recorded = readSweepPlan(dir);
  if (JSON.stringify(recorded) !== JSON.stringify(plan)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${path} records another sweep (${JSON.stringify(recorded)}); continue it with \`agentflow sweep --resume ${dir}\`, or choose another --out.`,
    });
  }
}

/** Reads the plan of a sweep directory (`--resume DIR`). */
export function readSweepPlan(dir: string): SweepPlan {
  const path = sweepPlanPath(dir);
  if (!existsSync(path)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `--resume ${dir}: ${path} is missing; expected a directory written by \`agentflow sweep\`.` });
  }
  let json: unknown;
  try {
    json = readConfigFile(path);
  } catch (cause) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${path} cannot be read as JSON (${(cause as Error).message}); it should hold the plan \`agentflow sweep\` wrote.`, cause });
  }
  const parsed = sweepPlanSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${path}: ${issue?.path.join('.') || 'the plan'}: ${issue?.message}; it should hold the plan \`agentflow sweep\` wrote.` });
  }
  return parsed.data;
}
