import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type RunSweepSettings, runSweep as runSweepRuns, type SweepOutcome, type SweepOutputSettings, type SweepRunSpec as EvalSweepRunSpec, sweepRuns as sweepRunsOf } from '@agentflow/eval';
import { resolveConfig } from '../pipeline/open-run';
import type { SweepPlan } from './sweep-plan';
import { readSweepRun } from './sweep-results';

/** Goals of the robust-learning issue, shown beside the figures. */
export const SWEEP_GOALS = { gainPoints: 15, prmMseReduction: 0.3, stepsRatio: 0.7 } as const;

/** One run of the sweep: its arm (credit), seed and directory. */
export interface SweepRunSpec extends EvalSweepRunSpec {
  /** The `--credit` value, or undefined for the config's own. */
  credit?: string;
}

/** The runs of a plan, arm by arm, seed by seed: `DIR/<credit>-seed<N>`. */
export function sweepRuns(plan: SweepPlan, dir: string): SweepRunSpec[] {
  const arms: Array<{ arm: string; credit?: string }> = plan.credits?.map((credit) => ({ arm: credit, credit })) ?? [
    { arm: resolveConfig({ ...(plan.config ? { config: plan.config } : {}), set: plan.set }).train.credit.kind },
  ];
  return sweepRunsOf(arms, plan.seeds, dir);
}

/** The sweep of `plan` in `dir` as eval's sweep reads it: this app's run directories, goals and words. */
export function sweepOutputSettings(plan: SweepPlan, dir: string, command: string): SweepOutputSettings<SweepRunSpec> {
  const runs = sweepRuns(plan, dir);
  return {
    dir,
    runs,
    readRun: (spec) => readSweepRun(spec.dir, spec.arm, spec.seed),
    title: `AgentFlow sweep: ${plan.seeds.length} seed(s) x ${[...new Set(runs.map((run) => run.arm))].join(', ')}`,
    command,
    goals: SWEEP_GOALS,
    plan,
    generatedBy: 'agentflow sweep',
    runNote: "Each run's own report: its directory's report.html.",
  };
}

/** Runs one run of the sweep, new or resumed. Throws what the run throws. */
export type RunOne = RunSweepSettings<SweepRunSpec>['runOne'];

/** Runs the plan's runs with eval's `runSweep`: a run with a `summary.json` is done, one with a `config.json` is resumed. */
export function runSweep(plan: SweepPlan, dir: string, settings: { command: string; runOne: RunOne; log: (line: string) => void }): Promise<SweepOutcome<SweepRunSpec>> {
  return runSweepRuns({
    ...sweepOutputSettings(plan, dir, settings.command),
    runOne: settings.runOne,
    log: settings.log,
    isFinished: (spec) => existsSync(join(spec.dir, 'summary.json')),
    isStarted: (spec) => existsSync(join(spec.dir, 'config.json')),
  });
}
