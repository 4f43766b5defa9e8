import type { Random, Trajectory } from '@agentflow/core';

/** What a rollout needs of a prompt: a task id and the question. */
export interface RolloutPrompt {
  id: string;
  question: string;
}

export interface RolloutSamplerSettings {
  /** One run of the agent (e.g. `runFlow` with the policy's planner), seeded. */
  run(question: string, ids: { taskId: string; trajectoryId: string; seed: number }): Promise<Trajectory>;
  /** Trajectory ids are `<idPrefix>-<task id>-<n>`, n counting every rollout of the sampler. Default 'rollout'. */
  idPrefix?: string;
}

/**
 * The `sampleRollouts(prompt, count, random)` of `@agentflow/dapo`'s trainer over the agent
 * loop: `count` concurrent runs of one prompt, each seeded by a draw from `random` (in order,
 * so a seeded trainer rolls out the same way every time) and with an id of its own.
 */
export function createRolloutSampler(settings: RolloutSamplerSettings): <Prompt extends RolloutPrompt>(prompt: Prompt, count: number, random: Random) => Promise<Trajectory[]> {
  const prefix = settings.idPrefix ?? 'rollout';
  let counter = 0;
  return (prompt, count, random) =>
    Promise.all(
      Array.from({ length: count }, () =>
        settings.run(prompt.question, { taskId: prompt.id, trajectoryId: `${prefix}-${prompt.id}-${counter++}`, seed: random.nextUint32() }),
      ),
    );
}
