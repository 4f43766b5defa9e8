import type { RunEventListener } from '@agentflow/core';
import type { RunConfig } from '../config/schema';
import type { RunDirectory } from '../pipeline/run-directory';
import { runStages, type Stage } from '../pipeline/run-stages';
import { collectStage } from './stages/collect';
import { evaluationStage } from './stages/evaluate';
import { labelStage } from './stages/label';
import { reportStage } from './stages/report';
import { trainStage } from './stages/train';
import { trainPrmStage } from './stages/train-prm';
import { warmStartStage } from './stages/warm-start';
import { createWorldContext, POLICY_CHECKPOINTS, type WorldContext } from './world-context';

/** The embedded default, in order. Each stage also runs alone (`agentflow collect --out DIR`...). */
export const WORLD_STAGES: Array<Stage<WorldContext>> = [
  warmStartStage,
  evaluationStage('eval-before', POLICY_CHECKPOINTS.warm),
  collectStage,
  labelStage,
  trainPrmStage,
  trainStage,
  evaluationStage('eval-after', POLICY_CHECKPOINTS.final),
  reportStage,
];

/** Stage names, for progress displays. */
export const WORLD_STAGE_NAMES = WORLD_STAGES.map((stage) => stage.name);

/** The stages `--credit outcome` can skip: its advantages need no PRM. */
const PRM_STAGES = new Set(['label', 'train-prm']);

/**
 * Runs the embedded default's stages in `run`, skipping what is done (resume), or only the
 * stages named in `only`. The python REPLs are disposed whatever happens.
 */
export async function runWorldPipeline(
  config: RunConfig,
  run: RunDirectory,
  emit: RunEventListener,
  only?: ReadonlySet<string>,
): Promise<void> {
  const context = createWorldContext(config, run, emit);
  const reason = await context.tools.unavailableReason();
  if (reason) emit({ type: 'log', level: 'warn', message: `the python tool is unavailable: ${reason}` });
  const stages = config.train.credit === 'outcome' ? WORLD_STAGES.filter((stage) => !PRM_STAGES.has(stage.name)) : WORLD_STAGES;
  try {
    await runStages(stages, run, context, emit, only);
  } finally {
    await context.tools.dispose();
  }
}
