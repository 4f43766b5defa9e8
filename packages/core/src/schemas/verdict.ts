import { z } from 'zod';

/** Why the verifier stopped (or did not stop) the loop. */
export const verdictReasonSchema = z.enum([
  'continue',
  'finish_action',
  'max_steps',
  'timeout',
  'repeated_action',
  'tool_error_streak',
  'llm_stop',
]);
export type VerdictReason = z.infer<typeof verdictReasonSchema>;

export const verdictSchema = z.object({
  stop: z.boolean().describe('True when the loop should end after this step.'),
  reason: verdictReasonSchema,
  analysis: z.string().optional().describe('The LLM verifier analysis, when one was asked.'),
});
export type Verdict = z.infer<typeof verdictSchema>;

/** The structured output an LLM verifier must produce. */
export const llmVerdictSchema = z
  .object({
    analysis: z.string().describe('Whether the memory already answers the question, and why.'),
    stop: z.boolean().describe('True when the answer is known and the loop should stop.'),
  })
  .strict();
export type LlmVerdict = z.infer<typeof llmVerdictSchema>;
