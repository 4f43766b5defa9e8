import { join } from 'node:path';
import { assertNever, createRandom, type LanguageModel, readJsonl, type Stage, type Trajectory } from '@agentflow/core';
import { createFlowCompleter } from '@agentflow/flow';
import { createChatModel } from '@agentflow/llm';
import { type CollectedStepsAdvice, createJudgeLabelling, createMonteCarloLabelling, type LabelSummary, labelTrajectoriesToFile, type StepLabelling } from '@agentflow/prm';
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

/** The planner Monte-Carlo completions continue with, and what to release after. */
export interface CompletionPlanner {
  model: LanguageModel;
  release: () => Promise<void>;
}

/** Monte-Carlo labels: N completions from each step with `planner`, within the task's step budget, right by the source's reward. */
function monteCarloLabelling(context: PipelineContext, samples: number, planner: CompletionPlanner, seedStream: string): StepLabelling {
  const { config, source } = context;
  const agent = createRunAgent(context, planner.model);
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
  const random = createRandom(config.seed).fork(seedStream);
  return createMonteCarloLabelling({ complete, samples, random, concurrency: 4, description: MONTE_CARLO_NAMES, release: planner.release });
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
 * Labels `trajectories`' steps, Monte-Carlo with the planner `openPlanner` opens (opened only
 * then) or by a judge (`label.kind`), into `labelsPath` with prm's `labelTrajectoriesToFile`:
 * resumable, and stopped with the settings to change when the PRM would have nothing to learn from.
 */
export async function labelToFile(
  context: PipelineContext,
  settings: {
    trajectories: Trajectory[];
    labelsPath: string;
    summaryPath: string;
    openPlanner: () => Promise<CompletionPlanner>;
    seedStream: string;
    onProgress: (completed: number, total: number) => void;
    /** Prefixes the messages (default `label`). */
    stage?: string;
  },
): Promise<LabelSummary> {
  const { run } = context;
  const label = context.config.label;
  const example = label.kind === 'judge' ? ', e.g. --set label.endpoint.baseUrl=URL' : '';
  return labelTrajectoriesToFile({
    trajectories: settings.trajectories,
    labeller: label.kind,
    openLabelling: async () => {
      switch (label.kind) {
        case 'monte-carlo':
          return monteCarloLabelling(context, label.samples, await settings.openPlanner(), settings.seedStream);
        case 'judge':
          return judgeLabelling(context, label);
        default:
          return assertNever(label, 'label kind');
      }
    },
    labelsPath: settings.labelsPath,
    summaryPath: settings.summaryPath,
    ...(settings.stage ? { stage: settings.stage } : {}),
    advice: collectedStepsAdvice(context),
    resumeHint: `resume: agentflow run --resume ${run.root} (--set KEY=VALUE changes the run's config${example})`,
    onProgress: ({ completed, total }) => settings.onProgress(completed, total),
  });
}

/** Labels the collected trajectories' steps ({@link labelToFile}), Monte-Carlo with the warm-started planner. */
export const labelStage: Stage<PipelineContext> = {
  name: 'label',
  async run(context, emit) {
    const summary = await labelToFile(context, {
      trajectories: trajectoriesToLabel(context),
      labelsPath: labelsPath(context),
      summaryPath: labelSummaryPath(context),
      openPlanner: async () => {
        const policy = await openPlannerCheckpoint(context, POLICY_CHECKPOINTS.warm);
        return { model: policy.languageModel, release: () => policy.policy.release() };
      },
      seedStream: 'label',
      onProgress: (completed, total) => emit({ type: 'progress', stage: 'label', completed, total }),
    });
    for (const failure of summary.failureSample) emit({ type: 'log', level: 'warn', message: `label: step ${failure}` });
    return summary;
  },
};
