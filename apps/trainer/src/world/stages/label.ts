import { join } from 'node:path';
import { appendJsonl, AgentFlowError, createRandom, readJsonl, type Trajectory } from '@agentflow/core';
import { createFlowCompleter } from '@agentflow/flow';
import { createMonteCarloLabeller, type PrmExample } from '@agentflow/prm';
import type { Stage } from '../../pipeline/run-stages';
import { createWorldPlanner, createWorldVerifier } from '../world-agent';
import { POLICY_CHECKPOINTS, type WorldContext } from '../world-context';
import { openWorldPolicy } from '../world-policy';
import { agentSettingsOf } from '../world-runs';

/** Where the labelled steps go, one PRM example per line. */
export const labelsPath = (context: WorldContext) => join(context.run.root, 'labels.jsonl');

/**
 * Monte-Carlo step labels (Math-Shepherd): from each step of a collected trajectory, N
 * completions with the warm-started planner continue the run; the soft label is the share
 * that reaches the right answer. Labels are appended per trajectory, so a resumed run
 * labels only what is missing.
 */
export const labelStage: Stage<WorldContext> = {
  name: 'label',
  async run(context, emit) {
    const { config, run, world } = context;
    if (config.label.kind !== 'monte-carlo') {
      throw new AgentFlowError({
        code: 'NOT_IMPLEMENTED',
        message: 'The embedded default labels with Monte-Carlo completions; judge labels run through `agentflow label --labeller judge`.',
      });
    }
    const { samples, maxTrajectories } = config.label;
    const collected = readJsonl<Trajectory>(run.paths.trajectories, { allowMissing: true })
      .filter((trajectory) => trajectory.id.startsWith('collect-'))
      .slice(0, maxTrajectories);
    const done = new Set(readJsonl<PrmExample>(labelsPath(context), { allowMissing: true }).map((example) => example.trajectoryId));
    const todo = collected.filter((trajectory) => !done.has(trajectory.id));
    const policy = await openWorldPolicy(context.policyDir, config.policy, {
      seed: config.seed,
      device: config.device,
      checkpoint: join(run.paths.checkpoints, POLICY_CHECKPOINTS.warm),
    });
    const agent = agentSettingsOf(context, policy.languageModel);
    const complete = createFlowCompleter({
      tools: context.tools.tools,
      createPlanner: ({ seed }) => createWorldPlanner(agent, seed),
      verifier: createWorldVerifier(agent),
      isCorrect: (answer, completion) => world.checkAnswer(completion.taskId ?? '', answer),
      limits: { maxSteps: config.policy.maxSteps, timeLimitMs: 120_000 },
      concurrency: 16,
    });
    const labeller = createMonteCarloLabeller({ complete, samples, random: createRandom(config.seed).fork('label'), concurrency: 4 });
    let completed = collected.length - todo.length;
    let failures = 0;
    emit({ type: 'progress', stage: 'label', completed, total: collected.length });
    for (let start = 0; start < todo.length; start += 8) {
      const batch = todo.slice(start, start + 8);
      const result = await labeller.label(batch);
      failures += result.failures.length;
      appendJsonl(labelsPath(context), result.examples);
      completed += batch.length;
      emit({ type: 'progress', stage: 'label', completed, total: collected.length });
    }
    await policy.policy.release();
    const examples = readJsonl<PrmExample>(labelsPath(context));
    return { trajectories: collected.length, steps: examples.length, failures, meanLabel: examples.reduce((s, e) => s + e.label, 0) / Math.max(1, examples.length) };
  },
};
