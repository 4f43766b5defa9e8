import { appendJsonl, createRandom, type LanguageModel, readJsonl, type Trajectory, type Stage } from '@agentflow/core';
import { runAgentJobs } from '@agentflow/flow';
import { createRunAgent } from '../pipeline/agent';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openPlannerCheckpoint, POLICY_CHECKPOINTS } from '../pipeline/planner-checkpoints';

/** The trajectory ids of the collect stage, stable across resumes. */
export const collectId = (taskId: string, rollout: number) => `collect-${taskId}-${rollout}`;

/** What {@link collectTrajectories} ran: trajectories in all, newly run, and the success rate of those. */
export interface CollectResult {
  trajectories: number;
  newlyCollected: number;
  successRateThisSession: number | null;
}

/**
 * Runs `model` as the planner over the first `collect.maxTasks` training tasks,
 * `collect.rolloutsPerTask` times each, each task within its own step budget where it has one,
 * and appends every trajectory, with its outcome reward, to `path`. Resumable: ids already in
 * `path` are skipped, and each job's seed comes from `seedStream` whatever was done before.
 */
export async function collectTrajectories(
  context: PipelineContext,
  settings: { model: LanguageModel; path: string; id: (taskId: string, rollout: number) => string; seedStream: string; onProgress: (completed: number, total: number) => void },
): Promise<CollectResult> {
  const { config, source } = context;
  const done = new Set(readJsonl<Trajectory>(settings.path, { allowMissing: true }).map((t) => t.id));
  const jobs = source
    .split('train')
    .slice(0, config.collect.maxTasks)
    .flatMap((item) => Array.from({ length: config.collect.rolloutsPerTask }, (_, rollout) => ({ item, rollout })));
  const seeds = createRandom(config.seed).fork(settings.seedStream);
  const seeded = jobs.map((job) => ({ ...job, seed: seeds.nextUint32(), id: settings.id(job.item.id, job.rollout) }));
  const todo = seeded.filter((job) => !done.has(job.id));
  const skipped = seeded.length - todo.length;
  let correct = 0;
  await runAgentJobs(
    createRunAgent(context, settings.model),
    todo.map((job) => ({
      question: job.item.question,
      taskId: job.item.id,
      trajectoryId: job.id,
      seed: job.seed,
      // A task's own step budget (the world with stepSlack), below policy.maxSteps where it is smaller.
      ...(job.item.maxSteps === undefined ? {} : { maxSteps: job.item.maxSteps }),
    })),
    {
      onBatch: async (batch, finished) => {
        const scored = await Promise.all(
          batch.map(async (trajectory) => ({
            ...trajectory,
            outcomeReward: await source.reward(source.item(trajectory.taskId ?? ''), trajectory.answer ?? undefined),
          })),
        );
        correct += scored.filter((trajectory) => trajectory.outcomeReward === 1).length;
        for (const trajectory of scored) await context.crossTask?.remember(trajectory, trajectory.outcomeReward);
        appendJsonl(settings.path, scored);
        settings.onProgress(skipped + finished, seeded.length);
      },
    },
  );
  return { trajectories: seeded.length, newlyCollected: todo.length, successRateThisSession: todo.length ? correct / todo.length : null };
}

/**
 * Runs the warm-started (not yet RL-trained) planner over the training split
 * ({@link collectTrajectories}) into `trajectories.jsonl`.
 */
export const collectStage: Stage<PipelineContext> = {
  name: 'collect',
  async run(context, emit) {
    const policy = await openPlannerCheckpoint(context, POLICY_CHECKPOINTS.warm);
    try {
      return await collectTrajectories(context, {
        model: policy.languageModel,
        path: context.run.paths.trajectories,
        id: collectId,
        seedStream: 'collect',
        onProgress: (completed, total) => emit({ type: 'progress', stage: 'collect', completed, total }),
      });
    } finally {
      await policy.policy.release();
    }
  },
};
