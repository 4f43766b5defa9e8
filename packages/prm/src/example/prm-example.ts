import { chatMessageSchema, plannerActionSchema } from '@agentflow/core';
import { z } from 'zod';

/** Who produced a label. `consensus` marks a step kept because judge and Monte-Carlo agreed. */
export const labellerSchema = z.enum(['judge', 'monte-carlo', 'consensus']);
export type Labeller = z.infer<typeof labellerSchema>;

/** Where a label came from and what it cost, so a data set can be audited and re-priced. */
export const labelProvenanceSchema = z
  .object({
    labeller: labellerSchema.describe('The labeller that produced the label.'),
    judgeModel: z.string().optional().describe('Model id of the LLM judge, when a judge was asked.'),
    costUsd: z.number().nonnegative().optional().describe('What the judge call cost in US dollars (0 for a cache hit).'),
    samples: z.number().int().nonnegative().optional().describe('Monte-Carlo completions started after the step.'),
    successes: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('How many of those completions reached the right answer.'),
    rationale: z.string().optional().describe("The judge's reason for its score."),
  })
  .strict();
export type LabelProvenance = z.infer<typeof labelProvenanceSchema>;

/**
 * One planner decision to be labelled: what the PRM sees (question, earlier decisions with
 * their tools' results, the decision; this decision's own result and the next prompt, which
 * a PRM reads only with `stepResult`) plus where it came from.
 */
export const prmStepSchema = z
  .object({
    id: z.string().min(1).describe('Stable id of the step: `<trajectoryId>:<stepIndex>`.'),
    trajectoryId: z.string().min(1).describe('Id of the trajectory the step belongs to.'),
    taskId: z.string().optional().describe('Id of the task, to group trajectories of one question (best-of-N).'),
    stepIndex: z.number().int().nonnegative().describe('Index of the step in its trajectory.'),
    question: z.string().describe('The question the agent was solving.'),
    history: z.array(plannerActionSchema).describe('The decisions before this one that parsed, in order.'),
    observations: z
      .array(z.string())
      .optional()
      .describe("What each history decision's tool returned, aligned with history ('' for finish); absent in labels written before it was recorded."),
    action: plannerActionSchema.nullable().describe('The decision to score, or null for a format error.'),
    prompt: z
      .array(chatMessageSchema)
      .optional()
      .describe("The planner's prompt messages for this step (what a PRM with input 'chat' reads); absent in older label files."),
    completion: z.string().optional().describe("The planner's raw output for this step (what a PRM with input 'chat' reads)."),
    completionLogprobs: z
      .array(z.number())
      .optional()
      .describe("The sampling log-prob of each token of the completion (what a PRM with confidence features reads); absent in older label files."),
    historyLogprobs: z
      .array(z.array(z.number()))
      .optional()
      .describe("The same for each history decision, aligned with history; absent unless every one was recorded."),
    result: z.string().optional().describe("What this decision's tool returned (a PRM with stepResult reads it); absent for a format error and in older label files."),
    nextPrompt: z
      .array(chatMessageSchema)
      .optional()
      .describe("The planner's prompt for the trajectory's next decision, showing this one's result (a PRM with input 'chat' and stepResult reads it); absent for the last decision and in older label files."),
    outcomeReward: z.number().optional().describe("The trajectory's outcome reward (1 correct, 0 wrong by default)."),
  })
  .strict();
export type PrmStep = z.infer<typeof prmStepSchema>;

/** A labelled step: the training and evaluation record of the PRM, one JSONL line each. */
export const prmExampleSchema = prmStepSchema
  .extend({
    label: z.number().min(0).max(1).describe('How good the decision is, in [0, 1].'),
    provenance: labelProvenanceSchema.describe('Who labelled the step and at what cost.'),
  })
  .strict();
export type PrmExample = z.infer<typeof prmExampleSchema>;
