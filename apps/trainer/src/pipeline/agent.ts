import type { LanguageModel } from '@agentflow/core';
import { type Agent, createAgent } from '@agentflow/flow';
import { createPromptTemplate } from '@agentflow/planner';
import type { PipelineContext } from './pipeline-context';

/** Wall-clock budget of one agent run. */
const RUN_TIME_LIMIT_MS = 120_000;

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
    template: createPromptTemplate(policy.prompt),
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
