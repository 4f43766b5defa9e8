import { z } from 'zod';
import { stepSchema } from './step';

export const terminationSchema = z.enum(['finished', 'max_steps', 'timeout', 'error']);
export type Termination = z.infer<typeof terminationSchema>;

/** One run of the agent on one question. */
export const trajectorySchema = z.object({
  id: z.string().min(1),
  taskId: z.string().optional().describe('Id of the task in its dataset, when known.'),
  question: z.string(),
  steps: z.array(stepSchema),
  answer: z.string().nullable().describe('The final answer, or null when none was produced.'),
  outcomeReward: z.number().optional().describe('Reward of the final answer (1 correct, 0 wrong by default).'),
  stepRewards: z.array(z.number()).optional().describe('One process reward per step, when scored.'),
  termination: terminationSchema,
  error: z.string().optional().describe('What went wrong, when termination is "error".'),
  startedAt: z.string().describe('ISO-8601 start time.'),
  durationMs: z.number().nonnegative(),
});
export type Trajectory = z.infer<typeof trajectorySchema>;
