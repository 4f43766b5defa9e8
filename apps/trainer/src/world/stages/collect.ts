import { join } from 'node:path';
import { appendJsonl, createRandom, readJsonl, type Trajectory } from '@agentflow/core';
import type { Stage } from '../../pipeline/run-stages';
import { runWorldAgent } from '../world-agent';
import { POLICY_CHECKPOINTS, type WorldContext } from '../world-context';
import { openWorldPolicy } from '../world-policy';

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
    let completed = seeded.length - todo.length;
    let correct = 0;
    for (let start = 0; start < todo.length; start += 16) {
      const batch = todo.slice(start, start + 16);
      const trajectories = await Promise.all(
        batch.map(async (job) => {
          const trajectory = await runWorldAgent(
            job.task.question,
            { model: policy.languageModel, tools: context.tools.tools, maxSteps: config.policy.maxSteps, maxTokens: config.policy.maxNewTokens, temperature: config.policy.temperature },
            { taskId: job.task.id, trajectoryId: job.id, seed: job.seed },
          );
          const success = world.checkAnswer(job.task.id, trajectory.answer);
          if (success) correct++;
          return { ...trajectory, taskId: job.task.id, outcomeReward: success ? 1 : 0 };
        }),
      );
      appendJsonl(run.paths.trajectories, trajectories);
      completed += batch.length;
      emit({ type: 'progress', stage: 'collect', completed, total: seeded.length });
    }
    await policy.policy.release();
    return { trajectories: seeded.length, newlyCollected: todo.length, successRateThisSession: todo.length ? correct / todo.length : null };
  },
};
