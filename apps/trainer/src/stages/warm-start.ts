import type { Stage } from '@agentflow/core';
import { join } from 'node:path';
import type { TaskItem } from '@agentflow/eval';
import { demonstrationSamples } from '@agentflow/flow';
import { heldOutSplit, runSupervisedWarmStart } from '@agentflow/models';
import { createRunAgent } from '../pipeline/agent';
import { evaluatePlanner } from '../pipeline/evaluate-planner';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { type OpenPlanner, plannerOf, plannerPhases, POLICY_CHECKPOINTS } from '../pipeline/planner-checkpoints';

/** The teacher's samples for the demonstrated training tasks, and the tasks held back for the check. */
async function warmStartSamples(context: PipelineContext) {
  const { config, source } = context;
  const train = source.split('train');
  const { taught, heldOut } = heldOutSplit(train, { heldOutTasks: config.warmStart.check?.heldOutTasks ?? 0, demonstrations: config.warmStart.demonstrations });
  // Every training task is replayed (the preflight check asked for them all too); the planner
  // and its tokenizer learn from the taught tasks' samples only.
  const samples = await demonstrationSamples(train, source, (model) => createRunAgent(context, model));
  const ids = new Set(taught.map((item) => item.id));
  return { samples: samples.filter((sample) => ids.has(sample.taskId)), taught: taught.length, heldOut };
}

/**
 * Supervised warm start on the task source's demonstrations (`@agentflow/models`'
 * runSupervisedWarmStart: supervised fine-tuning on the teacher's completion tokens, checkpointed
 * every epoch and checked), after creating the preset planner when the config asks for one. A
 * source without demonstrations (benchmark files) starts from the planner as it is: the stage
 * then saves its fresh adapter (or, with `warmStart.trainable` full, the planner's weights),
 * which every later stage opens. With `warmStart.check`, a warm start that fails it stops the
 * run here, naming what it reached.
 */
export const warmStartStage: Stage<PipelineContext> = {
  name: 'warm-start',
  async run(context, emit) {
    const { config, run, configured, source } = context;
    const demonstrated = source.demonstration !== undefined;
    const epochs = demonstrated ? config.warmStart.epochs : 0;
    const preset = !('path' in config.policy.model);
    // The preset planner learns its tokenizer from the samples: they are needed even with 0 epochs.
    const { samples, taught, heldOut } =
      demonstrated && (epochs > 0 || preset) ? await warmStartSamples(context) : { samples: [], taught: 0, heldOut: [] as TaskItem[] };
    if (!demonstrated && config.warmStart.epochs > 0) {
      emit({ type: 'log', level: 'info', message: `warm start: ${source.kind} has no demonstrations; the planner starts as it is (${context.policyDir}).` });
    }
    const checkpoint = run.checkpoint(POLICY_CHECKPOINTS.warm);
    const result = await runSupervisedWarmStart<OpenPlanner>({
      ...config.warmStart,
      epochs,
      seed: config.seed,
      samples,
      check: demonstrated ? config.warmStart.check : null,
      checkpointDir: checkpoint,
      progressPath: join(run.paths.checkpoints, 'warm-start.json'),
      ...(preset && configured.createPresetPlanner
        ? { prepare: (seed: number) => configured.createPresetPlanner!(context.policyDir, samples, seed) }
        : {}),
      openPolicy: async (seed) => plannerOf(context, await plannerPhases(context).openWarm({ seed, checkpoint })),
      // Accuracy on the held-back training tasks, sampled as every evaluation is.
      ...(heldOut.length === 0
        ? {}
        : {
            heldOutAccuracy: async (policy) =>
              (await evaluatePlanner(context, createRunAgent(context, policy.languageModel), { tasks: heldOut, idPrefix: 'warm-check-0' })).summary.accuracy,
          }),
      onStart: ({ epochsDone, losses }) => {
        // An epoch whose progress was saved just before a kill may lack its metrics row: add it once.
        const logged = new Set(run.readMetrics().flatMap((row) => (row.stage === 'warm-start' ? [row.step] : [])));
        run.appendMetrics(losses.flatMap((loss, index) => (logged.has(index + 1) ? [] : [{ stage: 'warm-start', step: index + 1, loss }])));
        emit({ type: 'progress', stage: 'warm-start', completed: epochsDone, total: epochs });
      },
      onEpoch: ({ epoch, loss }) => {
        run.appendMetrics([{ stage: 'warm-start', step: epoch, loss }]);
        emit({ type: 'progress', stage: 'warm-start', completed: epoch, total: epochs, metrics: { loss } });
      },
      remedy: 'DAPO would start from a planner that cannot answer; raise warmStart.epochs, or lower the check (warmStart.check: null accepts any).',
    });
    return {
      demonstrations: taught,
      samples: samples.length,
      epochs,
      finalLoss: result.finalLoss,
      ...(result.check ? { heldOutTasks: heldOut.length, heldOutAccuracy: result.check.heldOutAccuracy, check: result.check } : {}),
    };
  },
};
