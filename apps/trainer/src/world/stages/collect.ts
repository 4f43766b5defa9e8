import { join } from 'node:path';
import { appendJsonl, createRandom, readJsonl, type Trajectory } from '@agentflow/core';
import type { Stage } from '../../pipeline/run-stages';
import { POLICY_CHECKPOINTS, type WorldContext } from '../world-context';
import { openWorldPolicy } from '../world-policy';
import { runWorldJobs } from '../world-runs';

/** The trajectory ids of the collect stage, stable across resumes. */
const collectId = (taskId: string, rollout: number) => `collect-${taskId}-${rollout}`;

/**
 * Runs the warm-started (not yet RL-trained) planner over the training split and appends
 * every trajectory to `trajectories.jsonl`. A resumed run skips the ids already written.
 */
export const collectStage: Stage<WorldContext> = {
  name: 'collect',
  async run(context, emit) {
    const { config, run, world } = context;
    const done = new Set(readJsonl<Trajectory>(run.paths.trajectories, { allowMissing: true }).map((t) => t.id));
    const jobs = world
      .split('train')
      .slice(0, config.collect.maxTasks)
      .flatMap((task) => Array.from({ length: config.collect.rolloutsPerTask }, (_, rollout) => ({ task, rollout })));
    const seeds = createRandom(config.seed).fork('collect');
    const seeded = jobs.map((job) => ({ ...job, seed: seeds.nextUint32(), id: collectId(job.task.id, job.rollout) }));
    const todo = seeded.filter((job) => !done.has(job.id));
    const policy = await openWorldPolicy(context.policyDir, config.policy, {
      seed: config.seed,
      device: config.device,
      checkpoint: join(run.paths.checkpoints, POLICY_CHECKPOINTS.warm),
    });
    const skipped = seeded.length - todo.length;
    let correct = 0;
    await runWorldJobs(
      context,
      policy.languageModel,
      todo.map((job) => ({ question: job.task.question, taskId: job.task.id, trajectoryId: job.id, seed: job.seed })),
      (batch, done) => {
        const scored = batch.map((trajectory) => ({
          ...trajectory,
          outcomeReward: world.checkAnswer(trajectory.taskId ?? '', trajectory.answer) ? 1 : 0,
        }));
        correct += scored.filter((trajectory) => trajectory.outcomeReward === 1).length;
        appendJsonl(run.paths.trajectories, scored);
        emit({ type: 'progress', stage: 'collect', completed: skipped + done, total: seeded.length });
      },
    );
    await policy.policy.release();
    return { trajectories: seeded.length, newlyCollected: todo.length, successRateThisSession: todo.length ? correct / todo.length : null };
  },
};
