import { type RunDirectory, type RunEventListener, runStages, type Stage } from '@agentflow/core';
import { needsStepScores } from '@agentflow/dapo';
import type { RunConfig } from '../config/schema';
import { collectStage } from '../stages/collect';
import { evaluationStage } from '../stages/evaluate';
import { labelStage } from '../stages/label';
import { reportStage } from '../stages/report';
import { trainStage } from '../stages/train';
import { trainPrmStage } from '../stages/train-prm';
import { warmStartStage } from '../stages/warm-start';
import { createPipelineContext, type GuardedTaskSource, type PipelineContext } from './pipeline-context';
import { POLICY_CHECKPOINTS } from './planner-checkpoints';

/** Every task source's pipeline, in order. Each stage also runs alone (`agentflow collect --resume DIR`...). */
export const PIPELINE_STAGES: Array<Stage<PipelineContext>> = [
  warmStartStage,
  evaluationStage('eval-before', POLICY_CHECKPOINTS.warm),
  collectStage,
  labelStage,
  trainPrmStage,
  trainStage,
  evaluationStage('eval-after', POLICY_CHECKPOINTS.final),
  reportStage,
];

/** The stages outcome credit skips: its advantages need no PRM. */
const PRM_STAGES = new Set(['label', 'train-prm']);

/** The stages a config runs, by name: without label and train-prm under outcome credit. */
export function stageNamesOf(config: RunConfig): string[] {
  return PIPELINE_STAGES.filter((stage) => needsStepScores(config.train.credit) || !PRM_STAGES.has(stage.name)).map((stage) => stage.name);
}

/**
 * Runs the pipeline's stages in `run`, skipping what is done (resume), or only the stages named
 * in `only`. The leakage guard runs first (a leak stops here, before any stage); the tools'
 * python REPLs and the source's own processes are disposed whatever happens.
 */
export async function runPipeline(
  config: RunConfig,
  run: RunDirectory,
  emit: RunEventListener,
  settings: { only?: ReadonlySet<string>; guarded?: GuardedTaskSource } = {},
): Promise<void> {
  const context = await createPipelineContext(config, run, emit, settings.guarded);
  try {
    const reason = await context.tools.unavailableReason();
    if (reason) emit({ type: 'log', level: 'warn', message: `a tool is unavailable: ${reason}` });
    const names = new Set(stageNamesOf(config));
    await runStages(
      PIPELINE_STAGES.filter((stage) => names.has(stage.name)),
      run.ledger,
      context,
      emit,
      settings.only,
    );
  } finally {
    await context.tools.dispose();
    await context.source.dispose?.();
    await context.crossTask?.close();
  }
}
