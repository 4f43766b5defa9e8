import type { Random, Trajectory } from '@agentflow/core';

/** What a rollout needs of a prompt: a task id and the question, and the task's step budget where it has one. */
export interface RolloutPrompt {
  id: string;
  question: string;
  /** The task's own step budget (eval's `TaskItem.maxSteps`), passed to every rollout's `run`. */
  maxSteps?: number;
}

export interface RolloutSamplerSettings {
  /**
   * One run of the agent (e.g. an `Agent`'s `run`), seeded; `maxSteps` is the prompt's budget,
   * present only when the prompt has one.
   */
  run(question: string, ids: { taskId: string; trajectoryId: string; seed: number; maxSteps?: number }): Promise<Trajectory>;
  /** Trajectory ids are `<idPrefix>-<task id>-<n>`, n counting every rollout of the sampler. Default 'rollout'. */
  idPrefix?: string;
}

/**
 * The `sampleRollouts(prompt, count, random)` of `@agentflow/dapo`'s trainer over the agent
 * loop: `count` concurrent runs of one prompt, each seeded by a draw from `random` (in order,
 * so a seeded trainer rolls out the same way every time), with an id of its own and the
 * prompt's step budget.
 */
export function createRolloutSampler(settings: RolloutSamplerSettings): <Prompt extends RolloutPrompt>(prompt: Prompt, count: number, random: Random) => Promise<Trajectory[]> {
  const prefix = settings.idPrefix ?? 'rollout';
  let counter = 0;
  return (prompt, count, random) =>
    Promise.all(
      Array.from({ length: count }, () =>
        settings.run(prompt.question, {
          taskId: prompt.id,
          trajectoryId: `${prefix}-${prompt.id}-${counter++}`,
          seed: random.nextUint32(),
          ...(prompt.maxSteps === undefined ? {} : { maxSteps: prompt.maxSteps }),
        }),
      ),
    );
}
