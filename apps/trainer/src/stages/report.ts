import { AgentFlowError, type Stage, writeFileAtomic } from '@agentflow/core';
import { comparePairedRuns, prmOnPolicy, type RunSummary, runSummarySchema, stepOutcomeOfFiles } from '@agentflow/eval';
import type { PlannerEvaluation } from '../pipeline/evaluate-planner';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { type CheckedStages, runChecks } from '../report/run-checks';
import { writeRunReport } from '../report/write-run-report';
import { labelsPath } from './label';
import type { PrmStageResult } from './train-prm';

/** Writes `summary.json` and `report.html` from what the earlier stages recorded. */
export const reportStage: Stage<PipelineContext> = {
  name: 'report',
  async run(context) {
    const { run, config, source, leakage } = context;
    const before = run.stageResult<PlannerEvaluation>('eval-before');
    const after = run.stageResult<PlannerEvaluation>('eval-after');
    const prm = run.stageResult<PrmStageResult>('train-prm');
    const checks = runChecks({
      warmStart: run.stageResult<CheckedStages['warmStart']>('warm-start'),
      prm,
      train: run.stageResult<CheckedStages['train']>('train'),
      totalSteps: config.train.totalSteps,
    });
    if (!before || !after) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `report needs the eval-before and eval-after stages; ${run.root} has not finished ${before ? 'eval-after' : 'eval-before'}.`,
      });
    }
    const paired = comparePairedRuns(before.correct, after.correct, { resamples: 2000 });
    const started = Date.parse(run.readState().createdAt);
    const onPolicy = prmOnPolicy(run.readMetrics());
    const stepOutcome = stepOutcomeOfFiles({ labels: labelsPath(context), trajectories: run.paths.trajectories });
    const summary: RunSummary = runSummarySchema.parse({
      name: config.name,
      credit: config.train.credit.kind,
      task: { kind: source.kind, description: source.description, train: source.split('train').length, test: source.split('test').length },
      leakage,
      before: before.summary,
      after: after.summary,
      paired: { test: 'mcnemar-exact', pValue: paired.mcnemar.pValue, onlyBefore: paired.mcnemar.onlyA, onlyAfter: paired.mcnemar.onlyB },
      ...(prm
        ? { prm: { mse: prm.mse, mse_constant: prm.mse_constant, pearson: prm.pearson, spearman: prm.spearman, n: prm.n, calibration: prm.calibration } }
        : {}),
      ...(onPolicy ? { prmOnPolicy: onPolicy } : {}),
      ...(stepOutcome ? { stepOutcome } : {}),
      checks,
      durationSeconds: Number.isFinite(started) ? (Date.now() - started) / 1000 : undefined,
    });
    writeFileAtomic(run.paths.summary, `${JSON.stringify(summary, null, 2)}\n`);
    writeRunReport([run.root], run.paths.report);
    return { summary: run.paths.summary, report: run.paths.report, delta: summary.after.accuracy - summary.before.accuracy };
  },
};
