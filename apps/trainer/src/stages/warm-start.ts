import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, type LanguageModel, writeFileAtomic } from '@agentflow/core';
import type { TaskItem } from '@agentflow/eval';
import { supervisedFineTune } from '@agentflow/models';
import { createRunAgent } from '../pipeline/agent';
import { evaluatePlanner } from '../pipeline/evaluate-planner';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { plannerLora, plannerOf, POLICY_CHECKPOINTS } from '../pipeline/planner-checkpoints';
import type { Stage } from '../pipeline/run-stages';
import { demonstrationSamples } from './demonstration-samples';
import { abandonedEarly, checkAttempt, heldOutSplit, initSeedOf, type WarmStartAttempt } from './warm-start-check';

/** Where a warm start stands: the attempt under way, its epochs, and the attempts that failed before it. */
interface WarmStartProgress {
  attempt: number;
  epochsDone: number;
  losses: number[];
  failed: WarmStartAttempt[];
}

/** Thrown from an epoch's callback to stop an attempt whose loss already shows it failing. */
class AbandonAttempt extends Error {}

/** The teacher's samples for the demonstrated training tasks, and the tasks held back for the check. */
async function warmStartSamples(context: PipelineContext) {
  const { config, configured, source } = context;
  if (!configured.createTeacher) return { samples: [], taught: 0, heldOut: [] };
  const train = source.split('train');
  const { taught, heldOut } = heldOutSplit(train, config.warmStart);
  const teacher = configured.createTeacher(config.seed);
  // The teacher is asked for every training task in order (its random draws follow that order);
  // the planner and its tokenizer learn from the taught tasks' samples only.
  const samples = await demonstrationSamples(train, source, teacher, (model) => createRunAgent(context, model));
  const ids = new Set(taught.map((item) => item.id));
  return { samples: samples.filter((sample) => ids.has(sample.taskId)), taught: taught.length, heldOut };
}

/**
 * Supervised warm start on the task source's demonstrations (`@agentflow/models`'
 * supervisedFineTune: mean negative log-likelihood of the teacher's completion tokens), after creating the preset
 * planner when the config asks for one. A source without demonstrations (benchmark files)
 * starts from the planner as it is: the stage then saves its fresh adapter, which every later
 * stage opens. Checkpoints after every epoch, so a killed run resumes at the next epoch with
 * the same adapter and optimiser state.
 *
 * With `warmStart.check`, the result is checked (final loss, accuracy on held-back training
 * tasks) and a failing attempt is redone from the next initialisation (a new random planner
 * and adapter); when every attempt fails the run stops here, naming what each one reached.
 */
export const warmStartStage: Stage<PipelineContext> = {
  name: 'warm-start',
  async run(context, emit) {
    const { config, run, configured } = context;
    const check = configured.createTeacher ? config.warmStart.check : null;
    const epochs = configured.createTeacher ? config.warmStart.epochs : 0;
    const preset = !('path' in config.policy.model);
    // The preset planner learns its tokenizer from the samples: they are needed even with 0 epochs.
    const { samples, taught, heldOut } = epochs > 0 || preset ? await warmStartSamples(context) : { samples: [], taught: 0, heldOut: [] as TaskItem[] };
    if (configured.createTeacher === undefined && config.warmStart.epochs > 0) {
      emit({ type: 'log', level: 'info', message: `warm start: ${context.source.kind} has no demonstrations; the planner starts as it is (${context.policyDir}).` });
    }
    const checkpoint = run.checkpoint(POLICY_CHECKPOINTS.warm);
    const progressPath = join(run.paths.checkpoints, 'warm-start.json');
    const saved = existsSync(progressPath) ? (JSON.parse(readFileSync(progressPath, 'utf8')) as WarmStartProgress) : undefined;
    const progress = saved ?? { attempt: 0, epochsDone: 0, losses: [], failed: [] };
    for (;;) {
      const initSeed = initSeedOf(config.seed, progress.attempt);
      if (preset) await configured.createPresetPlanner?.(context.policyDir, samples, initSeed);
      const policy = plannerOf(context, await plannerLora(context).openWarm({ seed: initSeed, checkpoint }));
      const examples = samples.map((sample) => policy.encodeExample(sample.prompt, sample.completion));
      emit({ type: 'progress', stage: 'warm-start', completed: progress.epochsDone, total: epochs });
      try {
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
            run.appendMetrics([{ stage: 'warm-start', step: epoch + 1, loss, attempt: progress.attempt }]);
            emit({ type: 'progress', stage: 'warm-start', completed: epoch + 1, total: epochs, metrics: { loss } });
            if (check && abandonedEarly(check, epoch + 1, loss)) throw new AbandonAttempt();
          },
        });
      } catch (error) {
        if (!(error instanceof AbandonAttempt)) throw error;
      }
      if (epochs === 0) await policy.policy.save(checkpoint);
      const attempt = check
        ? await checkAttempt(check, { attempt: progress.attempt, initSeed, losses: progress.losses, epochs }, () =>
            heldOut.length === 0 ? Promise.resolve(null) : heldOutAccuracyOf(context, policy.languageModel, heldOut, progress.attempt),
          )
        : undefined;
      await policy.policy.release();
      if (!attempt || attempt.ok) {
        return {
          demonstrations: taught,
          samples: samples.length,
          epochs,
          finalLoss: progress.losses.at(-1) ?? null,
          ...(attempt ? { initSeed, heldOutTasks: heldOut.length, heldOutAccuracy: attempt.heldOutAccuracy, attempts: [...progress.failed, attempt] } : {}),
        };
      }
      progress.failed.push(attempt);
      if (progress.failed.length >= (check?.attempts ?? 1)) {
        throw new AgentFlowError({
          code: 'RUNTIME_ERROR',
          message:
            `The warm start failed its check in all ${progress.failed.length} attempt(s): ${progress.failed.map((failed) => failed.reason).join('; ')}. ` +
            'DAPO would start from a planner that cannot answer; raise warmStart.epochs or warmStart.check.attempts, or lower the check (warmStart.check: null accepts any).',
        });
      }
      emit({ type: 'log', level: 'warn', message: `warm start attempt ${progress.attempt + 1} failed its check (${attempt.reason}); retrying from a new initialisation.` });
      // The next attempt starts from nothing: a new random planner (preset) and a new adapter.
      rmSync(checkpoint, { recursive: true, force: true });
      if (preset && existsSync(context.policyDir)) rmSync(context.policyDir, { recursive: true, force: true });
      run.checkpoint(POLICY_CHECKPOINTS.warm);
      Object.assign(progress, { attempt: progress.attempt + 1, epochsDone: 0, losses: [] });
      writeFileAtomic(progressPath, JSON.stringify(progress));
    }
  },
};

/** Accuracy of the planner on the held-back training tasks, sampled as every evaluation is. */
async function heldOutAccuracyOf(context: PipelineContext, model: LanguageModel, tasks: readonly TaskItem[], attempt: number): Promise<number> {
  const evaluation = await evaluatePlanner(context, createRunAgent(context, model), { tasks, idPrefix: `warm-check-${attempt}` });
  return evaluation.summary.accuracy;
}
