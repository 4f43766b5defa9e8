import { join } from 'node:path';
import { AgentFlowError, appendJsonl, assertNever, createRandom, readJsonl, type Trajectory } from '@agentflow/core';
import { createFlowCompleter } from '@agentflow/flow';
import { createJudgeLabeller, createMonteCarloLabeller, extractSteps, type LabelResult, type PrmExample } from '@agentflow/prm';
import { createRunAgent } from '../pipeline/agent';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openPlannerCheckpoint, POLICY_CHECKPOINTS } from '../pipeline/planner-checkpoints';
import type { Stage } from '../pipeline/run-stages';
import { chatModelOf } from '../sources/chat-endpoint';

/** Where the labelled steps go, one PRM example per line. */
export const labelsPath = (context: Pick<PipelineContext, 'run'>) => join(context.run.root, 'labels.jsonl');
/** The judge's cache: a resumed or repeated run never pays for a step twice. */
export const judgeCachePath = (context: Pick<PipelineContext, 'run'>) => join(context.run.root, 'judge-cache.jsonl');

/** Trajectories labelled per append: a kill loses at most one batch of work. */
const BATCH = 8;

interface Labelling {
  label(batch: readonly Trajectory[]): Promise<LabelResult>;
  release(): Promise<void>;
  stats(): Record<string, number>;
}

/**
 * Monte-Carlo labels (Math-Shepherd): from each step of a collected trajectory, N completions
 * with the warm-started planner continue the run; the soft label is the share that reaches
 * the right answer by the source's reward.
 */
async function monteCarloLabelling(context: PipelineContext, samples: number): Promise<Labelling> {
  const { config, source } = context;
  const policy = await openPlannerCheckpoint(context, POLICY_CHECKPOINTS.warm);
  const agent = createRunAgent(context, policy.languageModel);
  const complete = createFlowCompleter({
    tools: context.tools.tools,
    createPlanner: ({ seed }) => agent.planner(seed),
    verifier: agent.verifier,
    generator: agent.generator,
    isCorrect: async (answer, completion) => (await source.reward(source.item(completion.taskId ?? ''), answer ?? undefined)) >= 1,
    limits: agent.limits,
    concurrency: 16,
  });
  const labeller = createMonteCarloLabeller({ complete, samples, random: createRandom(config.seed).fork('label'), concurrency: 4 });
  return { label: (batch) => labeller.label(batch), release: () => policy.policy.release(), stats: () => ({}) };
}

/**
 * LLM-judge labels: each step as the PRM will read it (never its own tool result), with the
 * task's reference answer when `includeReference` is set, sent to the configured endpoint;
 * cached in the run directory, priced as it goes.
 */
function judgeLabelling(context: PipelineContext, settings: Extract<PipelineContext['config']['label'], { kind: 'judge' }>): Labelling {
  const { source } = context;
  const labeller = createJudgeLabeller({
    model: chatModelOf(settings.endpoint),
    concurrency: settings.concurrency,
    cachePath: judgeCachePath(context),
    prices: {
      ...(settings.inputUsdPerMillion === undefined ? {} : { inputUsdPerMillion: settings.inputUsdPerMillion }),
      ...(settings.outputUsdPerMillion === undefined ? {} : { outputUsdPerMillion: settings.outputUsdPerMillion }),
    },
    ...(settings.includeReference ? { referenceAnswer: (step) => (step.taskId ? source.item(step.taskId).answer : undefined) } : {}),
  });
  return {
    label: (batch) => labeller.label(batch.flatMap((trajectory) => extractSteps(trajectory))),
    release: async () => {},
    stats: () => ({ ...labeller.stats() }),
  };
}

/**
 * Labels the collected trajectories' steps, Monte-Carlo or by a judge (`label.kind`). Labels
 * are appended per batch of trajectories, so a resumed run labels only what is missing.
 */
export const labelStage: Stage<PipelineContext> = {
  name: 'label',
  async run(context, emit) {
    const { config, run } = context;
    const settings = config.label;
    const collected = readJsonl<Trajectory>(run.paths.trajectories, { allowMissing: true })
      .filter((trajectory) => trajectory.id.startsWith('collect-'))
      .slice(0, settings.maxTrajectories);
    const steps = collected.reduce((sum, trajectory) => sum + trajectory.steps.length, 0);
    if (steps === 0) {
      const endings = [...new Set(collected.map((trajectory) => trajectory.termination))].join(', ');
      throw new AgentFlowError({
        code: 'RUNTIME_ERROR',
        message: `label: the collect stage yielded no planner steps to label (${collected.length} trajectories in ${run.paths.trajectories}${endings ? `, ended by ${endings}` : ''}); the PRM would have nothing to learn from. Check the planner (policy.model), policy.maxSteps and the task source, or use train.credit kind outcome, which needs no labels.`,
        details: { trajectories: collected.length },
      });
    }
    const done = new Set(readJsonl<PrmExample>(labelsPath(context), { allowMissing: true }).map((example) => example.trajectoryId));
    const todo = collected.filter((trajectory) => !done.has(trajectory.id));
    let labelling: Labelling;
    switch (settings.kind) {
      case 'monte-carlo':
        labelling = await monteCarloLabelling(context, settings.samples);
        break;
      case 'judge':
        labelling = judgeLabelling(context, settings);
        break;
      default:
        return assertNever(settings, 'label kind');
    }
    let completed = collected.length - todo.length;
    const failures: string[] = [];
    emit({ type: 'progress', stage: 'label', completed, total: collected.length });
    try {
      for (let start = 0; start < todo.length; start += BATCH) {
        const batch = todo.slice(start, start + BATCH);
        const result = await labelling.label(batch);
        for (const failure of result.failures) failures.push(`${failure.stepId}: ${failure.error}`);
        appendJsonl(labelsPath(context), result.examples);
        completed += batch.length;
        emit({ type: 'progress', stage: 'label', completed, total: collected.length });
      }
    } finally {
      await labelling.release();
    }
    for (const failure of failures.slice(0, 5)) emit({ type: 'log', level: 'warn', message: `label: step ${failure}` });
    const examples = readJsonl<PrmExample>(labelsPath(context), { allowMissing: true });
    return {
      labeller: settings.kind,
      trajectories: collected.length,
      steps: examples.length,
      failures: failures.length,
      meanLabel: examples.reduce((sum, example) => sum + example.label, 0) / Math.max(1, examples.length),
      ...labelling.stats(),
    };
  },
};
