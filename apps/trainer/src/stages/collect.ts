import { appendJsonl, createRandom, readJsonl, type Trajectory, type Stage } from '@agentflow/core';
import { runAgentJobs } from '@agentflow/flow';
import { createRunAgent } from '../pipeline/agent';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openPlannerCheckpoint, POLICY_CHECKPOINTS } from '../pipeline/planner-checkpoints';

/** The trajectory ids of the collect stage, stable across resumes. */
export const collectId = (taskId: string, rollout: number) => `collect-${taskId}-${rollout}`;

/**
 * Runs the warm-started (not yet RL-trained) planner over the training split, each task
 * within its own step budget where it has one, and appends every trajectory, with its
 * outcome reward, to `trajectories.jsonl`. A resumed run skips the
 * ids already written.
 */
export const collectStage: Stage<PipelineContext> = {
  name: 'collect',
  async run(context, emit) {
    const { config, run, source } = context;
    const done = new Set(readJsonl<Trajectory>(run.paths.trajectories, { allowMissing: true }).map((t) => t.id));
    const jobs = source
      .split('train')
      .slice(0, config.collect.maxTasks)
      .flatMap((item) => Array.from({ length: config.collect.rolloutsPerTask }, (_, rollout) => ({ item, rollout })));
    const seeds = createRandom(config.seed).fork('collect');
    const seeded = jobs.map((job) => ({ ...job, seed: seeds.nextUint32(), id: collectId(job.item.id, job.rollout) }));
    const todo = seeded.filter((job) => !done.has(job.id));
    const policy = await openPlannerCheckpoint(context, POLICY_CHECKPOINTS.warm);
    const skipped = seeded.length - todo.length;
    let correct = 0;
    await runAgentJobs(
      createRunAgent(context, policy.languageModel),
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
        appendJsonl(run.paths.trajectories, scored);
        emit({ type: 'progress', stage: 'collect', completed: skipped + finished, total: seeded.length });
        },
      },
    );
    await policy.policy.release();
    return { trajectories: seeded.length, newlyCollected: todo.length, successRateThisSession: todo.length ? correct / todo.length : null };
  },
};
