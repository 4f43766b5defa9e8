import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, type LanguageModel, readConfigFile, readJsonl, type RunEventListener, type StepScorer, type Trajectory, writeFileAtomic } from '@agentflow/core';
import { createPrmScorer, loadPrm, type Prm, type PrmExample } from '@agentflow/prm';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { collectTrajectories } from './collect';
import { labelToFile } from './label';
import { type PrmStageResult, trainPrmOn } from './train-prm';

/**
 * A PRM that stays fresh (`prm.refreshAt`). The PRM's confidence features are the log-probs the
 * steps were sampled with, and its labels the warm planner's chances of success from each step:
 * both drift as DAPO moves the policy. After DAPO step k of `prm.refreshAt`, the policy of step k
 * runs the collect stage's tasks again, its steps are labelled as the label stage labels (Monte
 * Carlo completions with that policy, or the judge), and a new PRM is trained on those labels
 * alone, as train-prm trains, into `checkpoints/prm-refresh-<k>`; steps after k are scored by it.
 * Its files are under `prm-refresh/step-<k>/` (trajectories, labels, the result), each resumable.
 */

/** Where refresh k keeps its trajectories, labels and result. */
const refreshDir = (context: Pick<PipelineContext, 'run'>, step: number) => join(context.run.root, 'prm-refresh', `step-${step}`);
/** The PRM checkpoint of refresh k (step 0: the train-prm stage's). */
const prmDir = (context: Pick<PipelineContext, 'run'>, step: number) => join(context.run.paths.checkpoints, step === 0 ? 'prm' : `prm-refresh-${step}`);
/** savePrm writes the config last: a folder with one is a complete checkpoint. */
const isComplete = (dir: string) => existsSync(join(dir, 'prm-config.json'));

/** What one refresh measured: the new PRM's held-out figures on the policy of its step. */
export interface PrmRefreshResult extends PrmStageResult {
  step: number;
  trajectories: number;
  successRate: number;
}

/** The result refresh `step` wrote. */
export function readRefreshResult(context: Pick<PipelineContext, 'run'>, step: number): PrmRefreshResult {
  return readConfigFile(join(refreshDir(context, step), 'result.json')) as PrmRefreshResult;
}

/**
 * Refresh `step`: collect with `model` (the policy at that step), label, train; skipped when its
 * checkpoint is complete. A refresh whose labels give the PRM nothing to learn from stops the
 * run with the label stage's own error (its settings to change).
 */
export async function refreshPrm(context: PipelineContext, settings: { step: number; model: LanguageModel }, emit: RunEventListener): Promise<void> {
  const { step, model } = settings;
  const out = prmDir(context, step);
  if (isComplete(out)) return;
  const dir = refreshDir(context, step);
  mkdirSync(dir, { recursive: true });
  const trajectoriesPath = join(dir, 'trajectories.jsonl');
  const progress = (phase: string) => (completed: number, total: number) => emit({ type: 'progress', stage: `prm-refresh-${step} ${phase}`, completed, total });
  const collected = await collectTrajectories(context, {
    model,
    path: trajectoriesPath,
    id: (taskId, rollout) => `refresh-${step}-${taskId}-${rollout}`,
    seedStream: `prm-refresh-${step}`,
    onProgress: progress('collect'),
  });
  const trajectories = readJsonl<Trajectory>(trajectoriesPath).slice(0, context.config.label.maxTrajectories);
  const labelsPath = join(dir, 'labels.jsonl');
  await labelToFile(context, {
    trajectories,
    labelsPath,
    summaryPath: join(dir, 'label-summary.json'),
    // The completions continue with the policy that wrote the trajectories; it stays open for DAPO.
    openPlanner: async () => ({ model, release: async () => {} }),
    seedStream: `prm-refresh-${step}-label`,
    stage: `prm-refresh-${step}`,
    onProgress: progress('label'),
  });
  const examples = readJsonl<PrmExample>(labelsPath).filter((example) => example.action !== null);
  const trained = await trainPrmOn(context, examples, { outDir: out, metricsStage: `prm-refresh-${step}` });
  const successRate = trajectories.filter((trajectory) => trajectory.outcomeReward === 1).length / Math.max(1, trajectories.length);
  const result: PrmRefreshResult = { step, trajectories: collected.trajectories, successRate, ...trained };
  writeFileAtomic(join(dir, 'result.json'), `${JSON.stringify(result, null, 2)}\n`);
  context.run.appendMetrics([{ stage: 'prm-refresh', step, mse: trained.mse, mseConstant: trained.mse_constant, successRate }]);
  emit({
    type: 'log',
    level: 'info',
    message: `prm-refresh after step ${step}: the policy solves ${(100 * successRate).toFixed(1)}% of ${trajectories.length} collected; the new PRM's held-out MSE ${trained.mse.toFixed(4)}, ${(100 * (1 - trained.mse / trained.mse_constant)).toFixed(1)}% below the constant`,
  });
}

/** The DAPO stage's PRM: the train-prm stage's, then each refresh's in turn. */
export interface RefreshablePrm {
  /** Scores with the PRM in use now. */
  stepScorer: StepScorer;
  /** The steps of `prm.refreshAt` below `train.totalSteps`, in order. */
  refreshSteps: number[];
  /** Puts in use the PRM for the steps after `step`: the latest refresh at or before it, made first (with `refresh`) when its checkpoint is missing. */
  use(step: number, refresh: (step: number) => Promise<void>): Promise<void>;
  release(): Promise<void>;
}

export function createRefreshablePrm(context: PipelineContext): RefreshablePrm {
  const { config } = context;
  const refreshSteps = [...new Set(config.prm.refreshAt)].filter((step) => step < config.train.totalSteps).sort((a, b) => a - b);
  let loaded: { step: number; prm: Prm; scorer: StepScorer } | undefined;
  return {
    refreshSteps,
    stepScorer: {
      score: (inputs) => {
        if (!loaded) throw new Error('the PRM is scored before RefreshablePrm.use loaded one');
        return loaded.scorer.score(inputs);
      },
    },
    async use(step, refresh) {
      const latest = refreshSteps.filter((refreshStep) => refreshStep <= step).at(-1) ?? 0;
      if (loaded?.step === latest) return;
      const missing = latest > 0 && !isComplete(prmDir(context, latest));
      if (missing && latest < step) {
        // Only a refreshAt changed on --resume gets here: the policy of step `latest` is gone.
        throw new AgentFlowError({
          code: 'INVALID_CONFIG',
          message: `prm.refreshAt names DAPO step ${latest}, but this run resumes at step ${step} without that refresh (${prmDir(context, latest)} is missing or incomplete); the policy of step ${latest} is no longer there to refresh with. Remove ${latest} from prm.refreshAt (--set prm.refreshAt=[...]) or name steps from ${step} on.`,
          details: { step: latest, resumedAt: step },
        });
      }
      if (missing) await refresh(latest);
      const prm = await loadPrm(prmDir(context, latest), { device: config.device, batchSize: config.prm.scoringBatchSize });
      await loaded?.prm.release();
      loaded = { step: latest, prm, scorer: createPrmScorer(prm) };
    },
    async release() {
      await loaded?.prm.release();
      loaded = undefined;
    },
  };
}
