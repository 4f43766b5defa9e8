import { assertNever, type LanguageModel, type Trajectory } from '@agentflow/core';
import { type Agent, createAgent } from '@agentflow/flow';
import { createCompactPromptTemplate, createFullPromptTemplate, type PromptTemplate } from '@agentflow/planner';
import type { RunConfig } from '../config/schema';
import type { PipelineContext } from './pipeline-context';

/** Wall-clock budget of one agent run. */
const RUN_TIME_LIMIT_MS = 120_000;

function promptTemplateOf(prompt: RunConfig['policy']['prompt']): PromptTemplate {
  switch (prompt.kind) {
    case 'compact':
      return createCompactPromptTemplate({ maxPromptChars: prompt.maxPromptChars, maxOutputChars: prompt.maxOutputChars });
    case 'full':
      return createFullPromptTemplate({ memoryBudgetChars: prompt.memoryBudgetChars });
    default:
      return assertNever(prompt, 'prompt kind');
  }
}

/** The agent of a run with one planner model: every stage runs its tasks through this. */
export type RunAgent = Agent;

/**
 * The configured agent over `model` as the planner: the prompt template of `policy.prompt`,
 * actions constrained to the tools' schemas (`tied`: each action with its own input), no
 * repair calls (a repair would be off-policy for RL); the rule verifier, with the fixed
 * modules' LLM verdict when `fixedModules` is set; the planner's finish input as the answer,
 * and the fixed generator's when the loop stops without one; with cross-task memory, the
 * most similar solved tasks as examples in the prompt.
 */
export function createRunAgent(
  context: Pick<PipelineContext, 'config' | 'tools' | 'fixedModel'> & Partial<Pick<PipelineContext, 'crossTask'>>,
  model: LanguageModel,
): RunAgent {
  const { policy } = context.config;
  return createAgent({
    model,
    tools: context.tools.tools,
    template: promptTemplateOf(policy.prompt),
    actionSchemaStyle: 'tied',
    maxRepairs: 0,
    temperature: policy.temperature,
    maxTokens: policy.maxNewTokens,
    fixedModules: { verifierModel: context.fixedModel, generatorModel: context.fixedModel },
    maxSteps: policy.maxSteps,
    timeLimitMs: RUN_TIME_LIMIT_MS,
    memory: context.crossTask,
  });
}

/** One agent run to make: the question, its ids and its sampling seed. */
export interface AgentJob {
  question: string;
  taskId: string;
  trajectoryId: string;
  seed: number;
}

/** Runs at once: the local policy batches the generations of concurrent runs. */
const RUNS_AT_ONCE = 16;

/**
 * Runs the jobs in batches of concurrent agents, in order; `onBatch` sees each batch's
 * trajectories as it finishes (to append them, or to report progress).
 */
export async function runAgentJobs(
  agent: RunAgent,
  jobs: readonly AgentJob[],
  onBatch?: (trajectories: Trajectory[], done: number) => void | Promise<void>,
): Promise<Trajectory[]> {
  const trajectories: Trajectory[] = [];
  for (let start = 0; start < jobs.length; start += RUNS_AT_ONCE) {
    const batch = await Promise.all(jobs.slice(start, start + RUNS_AT_ONCE).map((job) => agent.run(job.question, job)));
    trajectories.push(...batch);
    await onBatch?.(batch, trajectories.length);
  }
  return trajectories;
}
