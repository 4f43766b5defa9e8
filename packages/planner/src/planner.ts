import type { ChatMessage, LanguageModel, PlannerAction, Tool } from '@agentflow/core';
import { generateObject } from '@agentflow/llm';
import { type ActionSchemaStyle, createActionSchema } from './action/action-schema';
import { describeTools, type ToolCatalogueEntry } from './catalogue/tool-catalogue';
import { createFullPromptTemplate } from './prompt/full-template';
import type { PlannerMemoryView, PromptTemplate } from './prompt/prompt-template';

export interface PlannerSettings {
  model: LanguageModel;
  /** The tools the planner may call; their zod schemas make the catalogue and the action enum. */
  tools: readonly Pick<Tool, 'name' | 'description' | 'inputSchema'>[];
  /** Default: {@link createFullPromptTemplate}; use the compact template for a tiny local policy. */
  template?: PromptTemplate;
  /** `flat` (default; any back end) or `tied` (a root union per tool; local grammar-constrained policies). */
  actionSchemaStyle?: ActionSchemaStyle;
  /** Repair calls after an invalid reply (default 1; 0 for on-policy RL rollouts, where a repair is off-policy). */
  maxRepairs?: number;
  temperature?: number;
  topP?: number;
  /** Completion token limit per decision (default 512). */
  maxTokens?: number;
  seed?: number;
}

export interface PlannerInput {
  question: string;
  memory: PlannerMemoryView;
  examples?: string;
  stepIndex: number;
  maxSteps?: number;
  signal?: AbortSignal;
}

/**
 * One planner decision as training needs it: the exact messages and completion of the
 * model call that produced (or failed to produce) the action, with token ids and
 * log-probs when the model reports them.
 */
export interface PlannerDecision {
  prompt: ChatMessage[];
  completion: string;
  promptTokenIds?: number[];
  completionTokenIds?: number[];
  completionLogprobs?: number[];
  /** The policy version (adapter) that sampled the completion, when the model reports one. */
  policyVersion?: string;
  truncated: boolean;
  /** The parsed action, or null on a format error. */
  action: PlannerAction | null;
  parseError?: string;
  /** Model calls made (1 + repairs). */
  calls: number;
  /** True when the action was extracted from a reply that was not valid as a whole. */
  degraded: boolean;
  /**
   * Keys of the reply that the action schema does not name, dropped before validation
   * (dotted paths, e.g. `confidence`); absent when there were none.
   * Not part of the stored step: its `completion` keeps the raw reply, extra keys included.
   */
  droppedKeys?: string[];
}

export interface Planner {
  readonly tools: readonly ToolCatalogueEntry[];
  readonly template: PromptTemplate;
  decide(input: PlannerInput): Promise<PlannerDecision>;
}

/**
 * Creates the planner: renders the prompt, asks the model for `{thought, action,
 * action_input}` under a closed JSON schema, and records the decision. A reply with keys
 * the schema does not name is the same decision with those keys dropped (`droppedKeys`);
 * malformed output (a missing or ill-typed field) becomes a format-error decision, never a
 * throw; transport failures and cancellation do throw.
 */
export function createPlanner(settings: PlannerSettings): Planner {
  const tools = describeTools(settings.tools);
  const template = settings.template ?? createFullPromptTemplate();
  const { schema, jsonSchema } = createActionSchema(tools, settings.actionSchemaStyle ?? 'flat');

  async function decide(input: PlannerInput): Promise<PlannerDecision> {
    const messages = template.render({
      question: input.question,
      tools,
      memory: input.memory,
      stepIndex: input.stepIndex,
      ...(input.examples ? { examples: input.examples } : {}),
      ...(input.maxSteps === undefined ? {} : { maxSteps: input.maxSteps }),
    });
    const result = await generateObject(settings.model, schema, messages, {
      jsonSchema,
      maxRepairs: settings.maxRepairs ?? 1,
      maxTokens: settings.maxTokens ?? 512,
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
      ...(settings.topP === undefined ? {} : { topP: settings.topP }),
      ...(settings.seed === undefined ? {} : { seed: settings.seed + input.stepIndex }),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    const attempt = result.ok ? result.attempt : result.attempts[result.attempts.length - 1]!;
    const { response } = attempt;
    return {
      prompt: attempt.messages,
      completion: response.text,
      ...(response.promptTokenIds ? { promptTokenIds: response.promptTokenIds } : {}),
      ...(response.completionTokenIds ? { completionTokenIds: response.completionTokenIds } : {}),
      ...(response.completionLogprobs ? { completionLogprobs: response.completionLogprobs } : {}),
      ...(response.policyVersion === undefined ? {} : { policyVersion: response.policyVersion }),
      truncated: response.finishReason === 'length',
      action: result.ok ? result.value : null,
      ...(result.ok ? {} : { parseError: result.error }),
      calls: result.attempts.length,
      degraded: result.ok && result.degraded,
      ...(result.ok && result.droppedKeys.length > 0 ? { droppedKeys: result.droppedKeys } : {}),
    };
  }

  return { tools, template, decide };
}
