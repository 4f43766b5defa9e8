import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@agentflow/core';
import { resolveConfig } from '../pipeline/open-run';
import { analyseArm, compareCredits, type SweepArm } from './sweep-analysis';
import { readSweepRun } from './sweep-results';
import type { SweepPlan } from './sweep-plan';
import { renderSweepHtml, renderSweepMarkdown, type SweepReport } from './render-sweep';

/** One run of the sweep: its arm (credit), seed and directory. */
export interface SweepRunSpec {
  arm: string;
  /** The `--credit` value, or undefined for the config's own. */
  credit?: string;
  seed: number;
  dir: string;
}

/** The runs of a plan, arm by arm, seed by seed: `DIR/<credit>-seed<N>`. */
export function sweepRuns(plan: SweepPlan, dir: string): SweepRunSpec[] {
  const arms = plan.credits?.map((credit) => ({ arm: credit, credit })) ?? [
    { arm: resolveConfig({ ...(plan.config ? { config: plan.config } : {}), set: plan.set }).train.credit.kind, credit: undefined },
  ];
  return arms.flatMap(({ arm, credit }) => plan.seeds.map((seed) => ({ arm, ...(credit ? { credit } : {}), seed, dir: join(dir, `${arm}-seed${seed}`) })));
}

/** Runs one run of the sweep, new or resumed. Throws what the run throws. */
export type RunOne = (spec: SweepRunSpec, how: { resume: boolean }) => Promise<void>;

export interface SweepOutcome {
  report: SweepReport;
  failed: SweepRunSpec[];
  paths: { markdown: string; html: string; json: string };
}

/**
 * Runs a sweep's runs one after another: a run with a summary is done and skipped, a run
 * directory without one is resumed, a missing one is started. A failed run is recorded
 * (`failure.txt` in its directory) and the sweep goes on; the table and page are rewritten
 * after every run, so they always show what is done.
 */
export async function runSweep(
  plan: SweepPlan,
  dir: string,
  settings: { command: string; runOne: RunOne; log: (line: string) => void },
): Promise<SweepOutcome> {
  const specs = sweepRuns(plan, dir);
  const failed: SweepRunSpec[] = [];
  let outcome = writeSweepOutputs(plan, dir, specs, settings.command);
  for (const [index, spec] of specs.entries()) {
    if (existsSync(join(spec.dir, 'summary.json'))) continue;
    const resume = existsSync(join(spec.dir, 'config.json'));
    settings.log(`sweep: run ${index + 1} of ${specs.length}: ${spec.arm}, seed ${spec.seed} (${resume ? 'resuming' : 'starting'} ${spec.dir})\n`);
    rmSync(join(spec.dir, 'failure.txt'), { force: true });
    try {
      await settings.runOne(spec, { resume });
    } catch (error) {
      failed.push(spec);
      const message = error instanceof Error ? error.message : String(error);
      if (existsSync(spec.dir)) writeFileAtomic(join(spec.dir, 'failure.txt'), `${message}\n`);
      settings.log(`sweep: ${spec.arm}, seed ${spec.seed} failed: ${message}\n`);
    }
    outcome = writeSweepOutputs(plan, dir, specs, settings.command);
  }
  return { ...outcome, failed };
}

/** Reads every run of the sweep and writes `sweep.md`, `sweep.html` and `sweep-results.json`. */
export function writeSweepOutputs(plan: SweepPlan, dir: string, specs: readonly SweepRunSpec[], command: string): Omit<SweepOutcome, 'failed'> {
  const arms: SweepArm[] = [...new Set(specs.map((spec) => spec.arm))].map((arm) =>
    analyseArm(
      arm,
      specs.filter((spec) => spec.arm === arm).map((spec) => readSweepRun(spec.dir, spec.arm, spec.seed)),
    ),
  );
  const process = arms.find((arm) => arm.arm === 'process' || arm.arm.startsWith('process-'));
  const outcomeArm = arms.find((arm) => arm.arm === 'outcome');
  const comparison = process && outcomeArm ? compareCredits(process, outcomeArm) : undefined;
  const report: SweepReport = { title: `AgentFlow sweep: ${plan.seeds.length} seed(s) x ${arms.map((arm) => arm.arm).join(', ')}`, command, arms, ...(comparison ? { comparison } : {}) };
  const paths = { markdown: join(dir, 'sweep.md'), html: join(dir, 'sweep.html'), json: join(dir, 'sweep-results.json') };
  writeFileAtomic(paths.markdown, renderSweepMarkdown(report));
  writeFileAtomic(paths.html, renderSweepHtml(report));
  const json = {
    plan,
    arms: arms.map(({ runs, ...arm }) => ({ ...arm, runs: runs.map(({ summary, ...run }) => ({ ...run, ...(summary ? { before: summary.before, after: summary.after, prm: summary.prm, durationSeconds: summary.durationSeconds } : {}) })) })),
    ...(comparison ? { comparison } : {}),
  };
  writeFileAtomic(paths.json, `${JSON.stringify(json, (_key, value) => (value === Number.POSITIVE_INFINITY ? 'Infinity' : value), 2)}\n`);
  return { report, paths };
}
