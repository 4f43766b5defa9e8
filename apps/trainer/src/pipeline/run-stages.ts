import type { RunEventListener } from '@agentflow/core';
import type { RunDirectory } from './run-directory';

/** One stage of the pipeline. `run` may be interrupted at any moment and run again. */
export interface Stage<Context> {
  name: string;
  run(context: Context, emit: RunEventListener): Promise<unknown>;
}

/**
 * Runs stages in order, skipping those the run directory records as done. A stage is
 * marked done only after it returns, so a killed stage runs again on resume; stages that
 * do long work checkpoint inside themselves so that re-running repeats nothing finished.
 */
export async function runStages<Context>(
  stages: Array<Stage<Context>>,
  runDirectory: RunDirectory,
  context: Context,
  emit: RunEventListener,
  only?: ReadonlySet<string>,
): Promise<void> {
  for (const stage of stages) {
    if (only && !only.has(stage.name)) continue;
    if (runDirectory.isStageDone(stage.name)) {
      emit({ type: 'stage-end', stage: stage.name });
      continue;
    }
    emit({ type: 'stage-start', stage: stage.name });
    const result = await stage.run(context, emit);
    runDirectory.markStageDone(stage.name, result);
    emit({ type: 'stage-end', stage: stage.name });
  }
}
