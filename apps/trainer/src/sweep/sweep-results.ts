import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type MetricsRow, openRunDirectory, readConfigFile, readJsonl, validateConfig } from '@agentflow/core';
import { heldOutAccuracyCurve, readSweepFailure, runSummarySchema, type SweepRunRecord } from '@agentflow/eval';
import { type RunConfig, runConfigSchema } from '../config/schema';

interface StageRecord {
  result?: unknown;
}

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
  const stages: Record<string, StageRecord> = existsSync(join(dir, 'state.json')) ? openRunDirectory(dir).readState().stages : {};
  const warm = stages['warm-start']?.result as { finalLoss?: number | null; heldOutAccuracy?: number | null } | undefined;
  const train = stages.train?.result as { steps?: number; stoppedEarly?: string } | undefined;
  const failure = readSweepFailure(dir);
  const result: SweepRunRecord = {
    ...base,
    steps: train?.steps ?? 0,
    ...(train?.stoppedEarly ? { stoppedEarly: train.stoppedEarly } : {}),
    ...(warm ? { warmStart: { finalLoss: warm.finalLoss ?? null, heldOutAccuracy: warm.heldOutAccuracy ?? null } } : {}),
  };
  if (!existsSync(join(dir, 'summary.json'))) return { ...result, failure: failure ?? 'unfinished' };
  const summary = validateConfig(readConfigFile(join(dir, 'summary.json')), runSummarySchema, join(dir, 'summary.json'));
  const metrics = readJsonl<MetricsRow>(join(dir, 'metrics.jsonl'), { allowMissing: true });
  return { ...result, summary, curve: curveOf(config, metrics, stages) };
}

/** The held-out curve of a run (@agentflow/eval heldOutAccuracyCurve) from its config, metrics and evaluation stages. */
function curveOf(config: RunConfig, metrics: readonly MetricsRow[], stages: Record<string, StageRecord>): SweepRunRecord['curve'] {
  const correctOf = (name: string) => (stages[name]?.result as { correct?: boolean[] } | undefined)?.correct ?? [];
  const { totalSteps, evaluateEvery, groupSize, promptsPerBatch, evaluationTasks } = config.train;
  return heldOutAccuracyCurve({
    totalSteps,
    evaluateEvery,
    groupSize,
    groupsPerStep: promptsPerBatch,
    evaluationTasks,
    before: correctOf('eval-before'),
    after: correctOf('eval-after'),
    trainSteps: metrics.filter((row) => row.stage === 'train'),
    evaluations: metrics.filter((row) => row.stage === 'eval').map((row) => ({ step: row.step, accuracy: Number(row.accuracy) })),
  });
}
