import { z } from 'zod';

/** The structured output the judge must produce for one step. */
export const judgeOutputSchema = z
  .object({
    score: z.number().min(0).max(1).describe('How good the decision is: 0 wrong or useless, 1 clearly right.'),
    rationale: z.string().describe('One or two sentences on why.'),
  })
  .strict();
export type JudgeOutput = z.infer<typeof judgeOutputSchema>;
