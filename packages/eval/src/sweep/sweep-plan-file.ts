import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, readConfigFile, writeFileAtomic } from '@agentflow/core';
import type { z } from 'zod';

/** Where a sweep directory keeps its plan. */
export const sweepPlanPath = (dir: string) => join(dir, 'sweep.json');

/** What names the program that writes a sweep's plan, for its messages (`agentflow sweep`). */
export interface SweepPlanFileSettings {
  /** The command that writes and resumes sweeps, e.g. `agentflow sweep`. */
  command: string;
}

/**
 * Reads the plan of a sweep directory (a resume), checked against `schema`: a missing or
 * malformed plan is INVALID_ARGUMENT naming the file and what should be there.
 */
export function readSweepPlan<Schema extends z.ZodType>(dir: string, schema: Schema, settings: SweepPlanFileSettings): z.output<Schema> {
  const path = sweepPlanPath(dir);
  const wrote = `it should hold the plan \`${settings.command}\` wrote`;
  if (!existsSync(path)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `--resume ${dir}: ${path} is missing; expected a directory written by \`${settings.command}\`.` });
  }
  let json: unknown;
  try {
    json = readConfigFile(path);
  } catch (cause) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${path} cannot be read as JSON (${(cause as Error).message}); ${wrote}.`, cause });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${path}: ${issue?.path.join('.') || 'the plan'}: ${issue?.message}; ${wrote}.` });
  }
  return parsed.data;
}

/**
 * Records `plan` in `dir`, or checks it against the one recorded there: a sweep directory holds
 * one plan, so running the same command again continues it and a different one is refused.
 */
export function recordSweepPlan<Schema extends z.ZodType>(dir: string, plan: z.output<Schema>, schema: Schema, settings: SweepPlanFileSettings): void {
  const path = sweepPlanPath(dir);
  if (!existsSync(path)) {
    writeFileAtomic(path, `${JSON.stringify(plan, null, 2)}\n`);
    return;
  }
  const recorded = readSweepPlan(dir, schema, settings);
  if (JSON.stringify(recorded) !== JSON.stringify(plan)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${path} records another sweep (${JSON.stringify(recorded)}); continue it with \`${settings.command} --resume ${dir}\`, or choose another --out.`,
    });
  }
}
