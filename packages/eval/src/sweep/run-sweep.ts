import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@agentflow/core';
import { renderSweepHtml, renderSweepMarkdown, type SweepReport } from './render-sweep';
import { analyseSweepArm, compareSweepCredits, type SweepArm, type SweepGoals } from './sweep-analysis';
import { SWEEP_FAILURE_FILE, type SweepRunRecord, type SweepRunSpec } from './sweep-run';

/** The runs of a sweep, arm by arm, seed by seed, each in `dir/<arm>-seed<N>`; an arm's other fields (e.g. its credit) are kept. */
export function sweepRuns<Arm extends { arm: string }>(arms: readonly Arm[], seeds: readonly number[], dir: string): Array<Arm & { seed: number; dir: string }> {
  return arms.flatMap((arm) => seeds.map((seed) => ({ ...arm, seed, dir: join(dir, `${arm.arm}-seed${seed}`) })));
}

/** What {@link writeSweepOutputs} reads and writes: the runs, how to read one, and what the table and page say. */
export interface SweepOutputSettings<Spec extends SweepRunSpec = SweepRunSpec> {
  /** The sweep directory: `sweep.md`, `sweep.html` and `sweep-results.json` are written there. */
  dir: string;
  /** Every run of the sweep, finished or not, in table order (e.g. {@link sweepRuns}). */
  runs: readonly Spec[];
  /** One run's directory as a record; a run not started or failed is a record with a `failure` and no summary. */
  readRun: (spec: Spec) => SweepRunRecord;
  title: string;
  /** The command that runs the sweep, shown under the title. */
  command: string;
  goals: SweepGoals;
  /** Written first in `sweep-results.json` (e.g. the caller's record of what the sweep runs). */
  plan: unknown;
  /** Who wrote the page, and a sentence after it, in its footer (`SweepReport`). */
  generatedBy: string;
  runNote?: string;
  /** The clock of the page's footer. Default: the system clock. */
  now?: () => Date;
}

/** How {@link runSweep} runs the runs left, and tells a finished or started one. */
export interface RunSweepSettings<Spec extends SweepRunSpec = SweepRunSpec> extends SweepOutputSettings<Spec> {
  /** Runs one run, new (`resume: false`) or started before. Throws what the run throws. */
  runOne: (spec: Spec, how: { resume: boolean }) => Promise<void>;
  /** True when the run has its result: it is skipped. */
  isFinished: (spec: Spec) => boolean;
  /** True when the run was started (its directory has its config): it is resumed. */
  isStarted: (spec: Spec) => boolean;
  /** Progress lines, each ending in a newline. */
  log: (line: string) => void;
}

/** What a sweep wrote, and the runs that failed this time. */
export interface SweepOutcome<Spec extends SweepRunSpec = SweepRunSpec> {
  report: SweepReport;
  failed: Spec[];
  paths: { markdown: string; html: string; json: string };
}

/**
 * Runs a sweep's runs one after another: a finished run is skipped, a started one is resumed,
 * a missing one is started. A failed run is recorded (`failure.txt` in its directory, when it
 * has one) and the sweep goes on; the table and page are rewritten after every run, so they
 * always show what is done.
 */
export async function runSweep<Spec extends SweepRunSpec>(settings: RunSweepSettings<Spec>): Promise<SweepOutcome<Spec>> {
  const specs = settings.runs;
  const failed: Spec[] = [];
  let outcome = writeSweepOutputs(settings);
  for (const [index, spec] of specs.entries()) {
    if (settings.isFinished(spec)) continue;
    const resume = settings.isStarted(spec);
    settings.log(`sweep: run ${index + 1} of ${specs.length}: ${spec.arm}, seed ${spec.seed} (${resume ? 'resuming' : 'starting'} ${spec.dir})\n`);
    rmSync(join(spec.dir, SWEEP_FAILURE_FILE), { force: true });
    try {
      await settings.runOne(spec, { resume });
    } catch (error) {
      failed.push(spec);
      const message = error instanceof Error ? error.message : String(error);
      if (existsSync(spec.dir)) writeFileAtomic(join(spec.dir, SWEEP_FAILURE_FILE), `${message}\n`);
      settings.log(`sweep: ${spec.arm}, seed ${spec.seed} failed: ${message}\n`);
    }
    outcome = writeSweepOutputs(settings);
  }
  return { ...outcome, failed };
}

/**
 * Reads every run of the sweep and writes `sweep.md`, `sweep.html` and `sweep-results.json`
 * (atomically). Each arm is analysed across its seeds; when an arm named `outcome` is there,
 * every other arm is compared with it (`comparisons`), and the first named `process` (or
 * `process-...`) is also `comparison`, as before.
 */
export function writeSweepOutputs<Spec extends SweepRunSpec>(settings: SweepOutputSettings<Spec>): Omit<SweepOutcome<Spec>, 'failed'> {
  const { dir, runs: specs } = settings;
  const arms: SweepArm[] = [...new Set(specs.map((spec) => spec.arm))].map((arm) =>
    analyseSweepArm(
      arm,
      specs.filter((spec) => spec.arm === arm).map((spec) => settings.readRun(spec)),
      settings.goals,
    ),
  );
  const outcomeArm = arms.find((arm) => arm.arm === 'outcome');
  const comparisons = outcomeArm
    ? arms.flatMap((arm) => {
        const compared = arm === outcomeArm ? undefined : compareSweepCredits(arm, outcomeArm);
        return compared ? [compared] : [];
      })
    : [];
  const comparison = comparisons.find(({ process }) => process === 'process' || process.startsWith('process-'));
  const report: SweepReport = {
    title: settings.title,
    command: settings.command,
    arms,
    ...(comparison ? { comparison } : {}),
    ...(comparisons.length > 0 ? { comparisons } : {}),
    goals: settings.goals,
    generatedBy: settings.generatedBy,
    ...(settings.runNote ? { runNote: settings.runNote } : {}),
  };
  const paths = { markdown: join(dir, 'sweep.md'), html: join(dir, 'sweep.html'), json: join(dir, 'sweep-results.json') };
  writeFileAtomic(paths.markdown, renderSweepMarkdown(report));
  writeFileAtomic(paths.html, renderSweepHtml(report, settings.now ? settings.now() : new Date()));
  const json = {
    plan: settings.plan,
    arms: arms.map(({ runs, ...arm }) => ({ ...arm, runs: runs.map(({ summary, ...run }) => ({ ...run, ...(summary ? { before: summary.before, after: summary.after, prm: summary.prm, durationSeconds: summary.durationSeconds } : {}) })) })),
    ...(comparison ? { comparison } : {}),
    ...(comparisons.length > 0 ? { comparisons } : {}),
  };
  writeFileAtomic(paths.json, `${JSON.stringify(json, (_key, value) => (value === Number.POSITIVE_INFINITY ? 'Infinity' : value), 2)}\n`);
  return { report, paths };
}
