import { join } from 'node:path';
import { writeFileAtomic } from '@agentflow/core';
import { supervisedFineTune } from '@agentflow/models';
import { createRunAgent } from '../pipeline/agent';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openPlannerFolder, POLICY_CHECKPOINTS, readJsonIfExists } from '../pipeline/planner-checkpoints';
import type { Stage } from '../pipeline/run-stages';
import { type DemonstrationSample, demonstrationSamples } from './demonstration-samples';

interface WarmStartProgress {
  epochsDone: number;
  losses: number[];
}

/** The teacher's samples for the first `warmStart.demonstrations` training tasks (all when null). */
async function warmStartSamples(context: PipelineContext): Promise<{ samples: DemonstrationSample[]; taught: number }> {
  const { config, configured, source } = context;
  if (!configured.createTeacher) return { samples: [], taught: 0 };
  const teacher = configured.createTeacher(config.seed);
  const train = source.split('train');
  // The teacher is asked for every training task in order (its random draws follow that order);
  // the planner and its tokenizer learn from the first N tasks' samples only.
  const samples = await demonstrationSamples(train, source, teacher, (model) => createRunAgent(context, model));
  const taught = new Set(train.slice(0, config.warmStart.demonstrations ?? undefined).map((item) => item.id));
  return { samples: samples.filter((sample) => taught.has(sample.taskId)), taught: taught.size };
}

/**
 * Supervised warm start on the task source's demonstrations (`@agentflow/models`'
 * supervisedFineTune: mean negative log-likelihood of the teacher's completion tokens), after creating the preset
 * planner when the config asks for one. A source without demonstrations (benchmark files)
 * starts from the planner as it is: the stage then saves its fresh adapter, which every later
 * stage opens. Checkpoints after every epoch, so a killed run resumes at the next epoch with
 * the same adapter and optimiser state.
 */
export const warmStartStage: Stage<PipelineContext> = {
  name: 'warm-start',
  async run(context, emit) {
    const { config, run, configured } = context;
    const epochs = configured.createTeacher ? config.warmStart.epochs : 0;
    // The preset planner learns its tokenizer from the samples: they are needed even with 0 epochs.
    const needsSamples = epochs > 0 || !('path' in config.policy.model);
    const { samples, taught } = needsSamples ? await warmStartSamples(context) : { samples: [], taught: 0 };
    if (!('path' in config.policy.model)) await configured.createPresetPlanner?.(context.policyDir, samples, config.seed);
    if (configured.createTeacher === undefined && config.warmStart.epochs > 0) {
      emit({ type: 'log', level: 'info', message: `warm start: ${context.source.kind} has no demonstrations; the planner starts as it is (${context.policyDir}).` });
    }
    const checkpoint = run.checkpoint(POLICY_CHECKPOINTS.warm);
    const progressPath = join(checkpoint, 'progress.json');
    const progress = readJsonIfExists<WarmStartProgress>(progressPath) ?? { epochsDone: 0, losses: [] };
    const policy = await openPlannerFolder(context.policyDir, config.policy, { seed: config.seed, device: config.device, checkpoint });
    const examples = samples.map((sample) => policy.encodeExample(sample.prompt, sample.completion));
    emit({ type: 'progress', stage: 'warm-start', completed: progress.epochsDone, total: epochs });
    await supervisedFineTune(policy.policy, examples, {
      ...config.warmStart,
      epochs,
      seed: config.seed,
      startEpoch: progress.epochsDone,
      onEpoch: async (epoch, loss) => {
        progress.epochsDone = epoch + 1;
        progress.losses.push(loss);
        await policy.policy.save(checkpoint);
        writeFileAtomic(progressPath, JSON.stringify(progress));
        run.appendMetrics([{ stage: 'warm-start', step: epoch + 1, loss }]);
        emit({ type: 'progress', stage: 'warm-start', completed: epoch + 1, total: epochs, metrics: { loss } });
      },
    });
    if (epochs === 0) await policy.policy.save(checkpoint);
    await policy.policy.release();
    return { demonstrations: taught, samples: samples.length, epochs, finalLoss: progress.losses.at(-1) ?? null };
  },
};
