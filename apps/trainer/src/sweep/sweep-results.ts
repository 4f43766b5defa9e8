import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, readJsonl } from '@agentflow/core';
import { accuracy, readSweepFailure, type SweepRunRecord } from '@agentflow/eval';
import { type RunConfig, runConfigSchema } from '../config/schema';
import { type MetricsRow, runSummarySchema } from '../report/run-summary';

interface StageRecord {
  result?: unknown;
}

/** Accuracy of recorded verdicts; NaN (no point on the curve) when there are none. */
const fraction = (correct: readonly boolean[]) => (correct.length === 0 ? Number.NaN : accuracy(correct).estimate);

/**
 * Reads one run directory of a sweep into eval's `SweepRunRecord`: its summary, its DAPO steps,
 * the warm start's check, and its held-out accuracy curve on the first `evaluationTasks` test
 * tasks against DAPO steps. The curve's step 0 and last point come from the before and after
 * evaluations restricted to the evaluation tasks (the same tasks and sampling seeds as the
 * evaluations during training); a run that stopped early keeps its final accuracy to the end
 * (its planner no longer changes). Rollouts are the generated groups times the group size.
 */
export function readSweepRun(dir: string, arm: string, seed: number): SweepRunRecord {
  const configPath = join(dir, 'config.json');
  const empty: SweepRunRecord = { arm, seed, dir, steps: 0, totalSteps: 0, curve: [] };
  if (!existsSync(configPath)) return { ...empty, failure: 'not started' };
  let config: RunConfig;
  try {
    // Checked like any config: a damaged config.json fails this run's row, not the whole table.
    config = loadConfig(configPath, runConfigSchema);
  } catch (error) {
    return { ...empty, failure: error instanceof Error ? error.message : String(error) };
  }
  const base: SweepRunRecord = { ...empty, totalSteps: config.train.totalSteps };
  const stages = existsSync(join(dir, 'state.json'))
    ? (JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { stages: Record<string, StageRecord> }).stages
    : {};
  const warm = stages['warm-start']?.result as { finalLoss?: number | null; attempts?: unknown[]; heldOutAccuracy?: number | null } | undefined;
  const train = stages.train?.result as { steps?: number; stoppedEarly?: string } | undefined;
  const failure = readSweepFailure(dir);
  const result: SweepRunRecord = {
    ...base,
    steps: train?.steps ?? 0,
    ...(train?.stoppedEarly ? { stoppedEarly: train.stoppedEarly } : {}),
    ...(warm ? { warmStart: { finalLoss: warm.finalLoss ?? null, attempts: warm.attempts?.length ?? 1, heldOutAccuracy: warm.heldOutAccuracy ?? null } } : {}),
  };
  if (!existsSync(join(dir, 'summary.json'))) return { ...result, failure: failure ?? 'unfinished' };
  const summary = runSummarySchema.parse(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')));
  const metrics = readJsonl<MetricsRow>(join(dir, 'metrics.jsonl'), { allowMissing: true });
  return { ...result, summary, curve: curveOf(config, metrics, stages) };
}

function curveOf(config: RunConfig, metrics: readonly MetricsRow[], stages: Record<string, StageRecord>): SweepRunRecord['curve'] {
  const tasks = config.train.evaluationTasks;
  const correctOf = (name: string) => ((stages[name]?.result as { correct?: boolean[] } | undefined)?.correct ?? []).slice(0, tasks);
  const rolloutsAt = new Map<number, number>();
  let rollouts = 0;
  for (const row of metrics.filter((row) => row.stage === 'train').sort((a, b) => a.step - b.step)) {
    rollouts += Number(row.groupsGenerated ?? config.train.promptsPerBatch) * config.train.groupSize;
    rolloutsAt.set(row.step, rollouts);
  }
  const lastStep = Math.max(0, ...rolloutsAt.keys());
  const curve = [{ step: 0, rollouts: 0, accuracy: fraction(correctOf('eval-before')) }];
  for (const row of metrics.filter((row) => row.stage === 'eval' && row.step < config.train.totalSteps)) {
    if (row.step <= lastStep) curve.push({ step: row.step, rollouts: rolloutsAt.get(row.step) ?? rollouts, accuracy: Number(row.accuracy) });
  }
  const after = fraction(correctOf('eval-after'));
  // After an early stop the planner no longer changes: its final accuracy holds at every later evaluation step.
  const every = config.train.evaluateEvery;
  if (every > 0) for (let step = (Math.floor(lastStep / every) + 1) * every; step < config.train.totalSteps; step += every) curve.push({ step, rollouts, accuracy: after });
  curve.push({ step: config.train.totalSteps, rollouts, accuracy: after });
  return curve;
}
