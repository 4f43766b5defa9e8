import { z } from 'zod';
import { chatMessageSchema } from './chat';
import { plannerActionSchema, toolResultSchema } from './planner-action';
import { verdictSchema } from './verdict';

/**
 * One planner decision and everything that followed from it. The prompt and completion
 * are kept exactly as the policy saw and produced them, so that training can recompute
 * log-probabilities of the same tokens.
 */
export const stepSchema = z.object({
  index: z.number().int().nonnegative(),
  prompt: z.array(chatMessageSchema).describe('The exact messages sent to the planner.'),
  completion: z.string().describe('The raw planner output.'),
  promptTokenIds: z.array(z.number().int()).optional().describe('Prompt token ids (local policy only).'),
  completionTokenIds: z.array(z.number().int()).optional().describe('Completion token ids (local policy only).'),
  completionLogprobs: z.array(z.number()).optional().describe('Sampling log-probs of the completion tokens.'),
  policyVersion: z
    .string()
    .optional()
    .describe('The policy version that sampled the completion, when the back end serves versions (the LoRA adapter name on a vLLM server).'),
  truncated: z.boolean().default(false).describe('True when the completion hit the token limit.'),
  action: plannerActionSchema.nullable().describe('The parsed action, or null on a format error.'),
  parseError: z.string().optional().describe('Why the completion did not parse, when it did not.'),
  toolResult: toolResultSchema.optional(),
  verdict: verdictSchema.optional(),
  timings: z.object({
    plannerMs: z.number().nonnegative(),
    toolMs: z.number().nonnegative(),
    verifierMs: z.number().nonnegative(),
  }),
});
export type Step = z.infer<typeof stepSchema>;
