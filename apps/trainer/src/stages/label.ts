import { join } from 'node:path';
import { assertNever, createRandom, readJsonl, type Stage, type Trajectory } from '@agentflow/core';
import { createFlowCompleter } from '@agentflow/flow';
import { createChatModel } from '@agentflow/llm';
import { type CollectedStepsAdvice, createJudgeLabelling, createMonteCarloLabelling, labelTrajectoriesToFile, type StepLabelling } from '@agentflow/prm';
import { createRunAgent } from '../pipeline/agent';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openPlannerCheckpoint, POLICY_CHECKPOINTS } from '../pipeline/planner-checkpoints';

/** Where the labelled steps go, one PRM example per line. */
export const labelsPath = (context: Pick<PipelineContext, 'run'>) => join(context.run.root, 'labels.jsonl');
/** The judge's cache: a resumed or repeated run never pays for a step twice. */
export const judgeCachePath = (context: Pick<PipelineContext, 'run'>) => join(context.run.root, 'judge-cache.jsonl');
/** Why the stage finished or stopped: its counts, also the stage's result in state.json. */
export const labelSummaryPath = (context: Pick<PipelineContext, 'run'>) => join(context.run.root, 'label-summary.json');

/** The trajectories the stage labels: the collect stage's, at most `label.maxTrajectories`. */
export function trajectoriesToLabel(context: Pick<PipelineContext, 'config' | 'run'>): Trajectory[] {
  return readJsonl<Trajectory>(context.run.paths.trajectories, { allowMissing: true })
    .filter((trajectory) => trajectory.id.startsWith('collect-'))
    .slice(0, context.config.label.maxTrajectories);
}

/** The settings a run's label and train-prm stages name when collect yielded nothing to label. */
export function collectedStepsAdvice(context: Pick<PipelineContext, 'config' | 'run'>): CollectedStepsAdvice {
  return {
    collector: 'the collect stage',
    trajectoriesPath: context.run.paths.trajectories,
    maxNewTokens: { setting: 'policy.maxNewTokens', value: context.config.policy.maxNewTokens },
    noSteps: 'the planner (policy.model), policy.maxSteps and the task source',
    formatErrors: 'the planner (policy.model) and its prompt (policy.prompt)',
    otherwise: 'or use train.credit kind outcome, which needs no labels',
  };
}

/** How the messages name a run's Monte-Carlo labelling. */
export const MONTE_CARLO_NAMES = {
  setting: 'label.samples',
  completer: 'the warm-started planner',
  check: 'what the completions call (fixedModules, the tools), or label with a judge (label.kind judge)',
};

/** Monte-Carlo labels: N completions from each step with the warm-started planner, within the task's step budget, right by the source's reward. */
async function monteCarloLabelling(context: PipelineContext, samples: number): Promise<StepLabelling> {
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
    // Completions keep the continued task's own step budget, as its collected trajectory did.
    maxStepsFor: (trajectory) => (trajectory.taskId === undefined ? undefined : source.item(trajectory.taskId).maxSteps),
    concurrency: 16,
  });
  const random = createRandom(config.seed).fork('label');
  return createMonteCarloLabelling({ complete, samples, random, concurrency: 4, description: MONTE_CARLO_NAMES, release: () => policy.policy.release() });
}

/** LLM-judge labels from the configured endpoint, with the task's reference answer when `includeReference` is set. */
function judgeLabelling(context: PipelineContext, settings: Extract<PipelineContext['config']['label'], { kind: 'judge' }>): StepLabelling {
  const { source } = context;
  const { endpoint } = settings;
  const openai = endpoint.kind === 'openai';
  return createJudgeLabelling({
    model: createChatModel(endpoint),
    concurrency: settings.concurrency,
    cachePath: judgeCachePath(context),
    // An unset price is the labeller's default (DeepSeek's).
    prices: { inputUsdPerMillion: settings.inputUsdPerMillion, outputUsdPerMillion: settings.outputUsdPerMillion },
    ...(settings.includeReference ? { referenceAnswer: (step) => (step.taskId ? source.item(step.taskId).answer : undefined) } : {}),
    description: { model: endpoint.model, url: openai ? endpoint.baseUrl : endpoint.url, setting: `label.endpoint (its model, ${openai ? 'baseUrl or responseFormat' : 'url'})` },
  });
}

/**
 * Labels the collected trajectories' steps, Monte-Carlo or by a judge (`label.kind`), into the
 * run directory with prm's `labelTrajectoriesToFile`: resumable, and stopped with the settings
 * to change when the PRM would have nothing to learn from.
 */
export const labelStage: Stage<PipelineContext> = {
  name: 'label',
  async run(context, emit) {
    const { config, run } = context;
    const settings = config.label;
    const example = settings.kind === 'judge' ? ', e.g. --set label.endpoint.baseUrl=URL' : '';
    const summary = await labelTrajectoriesToFile({
      trajectories: trajectoriesToLabel(context),
      labeller: settings.kind,
      openLabelling: () => {
        switch (settings.kind) {
          case 'monte-carlo':
            return monteCarloLabelling(context, settings.samples);
          case 'judge':
            return judgeLabelling(context, settings);
          default:
            return assertNever(settings, 'label kind');
        }
      },
      labelsPath: labelsPath(context),
      summaryPath: labelSummaryPath(context),
      advice: collectedStepsAdvice(context),
      resumeHint: `resume: agentflow run --resume ${run.root} (--set KEY=VALUE changes the run's config${example})`,
      onProgress: ({ completed, total }) => emit({ type: 'progress', stage: 'label', completed, total }),
    });
    for (const failure of summary.failureSample) emit({ type: 'log', level: 'warn', message: `label: step ${failure}` });
    return summary;
  },
};
