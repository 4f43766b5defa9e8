import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { appendJsonl, assertNever, createRandom, readJsonl, type Trajectory, writeFileAtomic, type Stage } from '@agentflow/core';
import { createFlowCompleter } from '@agentflow/flow';
import { createJudgeLabeller, createMonteCarloLabeller, extractSteps, type LabelFailure, type LabelResult, type PrmExample } from '@agentflow/prm';
import { createRunAgent } from '../pipeline/agent';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openPlannerCheckpoint, POLICY_CHECKPOINTS } from '../pipeline/planner-checkpoints';
import { chatModelOf } from '../sources/chat-endpoint';
import { type CollectedSteps, collectedSteps, type LabellerDescription, nothingCollectedError, nothingLabelledError } from './label-outcome';

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

/** Trajectories labelled per append: a kill loses at most one batch of work. */
const BATCH = 8;

interface Labelling {
  /** Who labels, as a message names it. */
  description: LabellerDescription;
  /** Labels the steps of `batch` that `pending` accepts (those labels.jsonl lacks). */
  label(batch: readonly Trajectory[], pending: (stepId: string) => boolean): Promise<LabelResult>;
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
  return {
    description: { kind: 'monte-carlo', samples },
    // Whole trajectories: a step labelled before a failure in its trajectory is completed again, and dropped.
    label: async (batch, pending) => {
      const result = await labeller.label(batch);
      return {
        examples: result.examples.filter((example) => pending(example.id)),
        failures: result.failures.filter((failure) => pending(failure.stepId)),
      };
    },
    release: () => policy.policy.release(),
    stats: () => ({}),
  };
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
  const { endpoint } = settings;
  return {
    description: {
      kind: 'judge',
      model: endpoint.model,
      url: endpoint.kind === 'openai' ? endpoint.baseUrl : endpoint.url,
      setting: `label.endpoint (its model, ${endpoint.kind === 'openai' ? 'baseUrl or responseFormat' : 'url'})`,
    },
    label: (batch, pending) => labeller.label(batch.flatMap((trajectory) => extractSteps(trajectory)).filter((step) => pending(step.id))),
    release: async () => {},
    stats: () => ({ ...labeller.stats() }),
  };
}

/** What `label-summary.json` holds; the stage's result when it finishes. */
export interface LabelSummary {
  labeller: 'judge' | 'monte-carlo';
  /** The collected trajectories labelled (at most `label.maxTrajectories`) and their planner steps. */
  trajectories: number;
  steps: number;
  /** Steps whose completion did not parse: labelled 0 without a judge or completions, skipped by the PRM. */
  formatErrors: number;
  /** Lines of labels.jsonl, and those the PRM learns from (a parsed action). */
  labelled: number;
  usable: number;
  /** Steps this session could not label, and the first few of them with why. */
  failures: number;
  failureSample: string[];
  meanLabel: number;
  /** The labeller's own counts: for a judge, its calls, cache hits, tokens and cost in USD. */
  stats: Record<string, number>;
  /** Why the stage stopped, when it did: the error it ended with. */
  stopped?: string;
}

function summarise(
  labeller: LabelSummary['labeller'],
  found: CollectedSteps,
  examples: readonly PrmExample[],
  failures: readonly string[],
  stats: Record<string, number>,
): LabelSummary {
  return {
    labeller,
    trajectories: found.trajectories,
    steps: found.steps,
    formatErrors: found.formatErrors,
    labelled: examples.length,
    usable: examples.filter((example) => example.action !== null).length,
    failures: failures.length,
    failureSample: failures.slice(0, 5),
    meanLabel: examples.reduce((sum, example) => sum + example.label, 0) / Math.max(1, examples.length),
    stats,
  };
}

/**
 * Labels the collected trajectories' steps, Monte-Carlo or by a judge (`label.kind`). Labels
 * are appended per batch of trajectories, so a resumed run labels only the steps still missing.
 * Stops, naming the cause and the setting, when the PRM would have nothing to learn from: no
 * collected step, only format errors, or a labeller that labelled none. labels.jsonl (possibly
 * empty) and label-summary.json are written either way.
 */
export const labelStage: Stage<PipelineContext> = {
  name: 'label',
  async run(context, emit) {
    const { config, run } = context;
    const settings = config.label;
    const path = labelsPath(context);
    // A later stage or a resume finds an empty file, never a missing one.
    if (!existsSync(path)) writeFileAtomic(path, '');
    const collected = trajectoriesToLabel(context);
    const found = collectedSteps(collected);
    const write = (summary: LabelSummary) => writeFileAtomic(labelSummaryPath(context), `${JSON.stringify(summary, null, 2)}\n`);
    const useless = nothingCollectedError('label', found, { trajectoriesPath: run.paths.trajectories, maxNewTokens: config.policy.maxNewTokens });
    if (useless) {
      write({ ...summarise(settings.kind, found, readJsonl<PrmExample>(path), [], {}), stopped: useless.message });
      throw useless;
    }
    const done = new Set(readJsonl<PrmExample>(path).map((example) => example.id));
    const pending = (stepId: string) => !done.has(stepId);
    const todo = collected.filter((trajectory) => extractSteps(trajectory).some((step) => pending(step.id)));
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
    const failures: LabelFailure[] = [];
    emit({ type: 'progress', stage: 'label', completed, total: collected.length });
    try {
      for (let start = 0; start < todo.length; start += BATCH) {
        const batch = todo.slice(start, start + BATCH);
        const result = await labelling.label(batch, pending);
        failures.push(...result.failures);
        appendJsonl(path, result.examples);
        completed += batch.length;
        emit({ type: 'progress', stage: 'label', completed, total: collected.length });
      }
    } finally {
      await labelling.release();
    }
    const described = failures.map((failure) => `${failure.stepId}: ${failure.error}`);
    const summary = summarise(settings.kind, found, readJsonl<PrmExample>(path), described, labelling.stats());
    if (summary.usable === 0) {
      const example = settings.kind === 'judge' ? ', e.g. --set label.endpoint.baseUrl=URL' : '';
      const then = `resume: agentflow run --resume ${run.root} (--set KEY=VALUE changes the run's config${example})`;
      const error = nothingLabelledError('label', labelling.description, failures, then);
      write({ ...summary, stopped: error.message });
      throw error;
    }
    write(summary);
    for (const failure of described.slice(0, 5)) emit({ type: 'log', level: 'warn', message: `label: step ${failure}` });
    return summary;
  },
};
