import { z } from 'zod';

/** The rules that end the loop without asking a model. */
export const ruleSettingsSchema = z
  .object({
    maxSteps: z
      .number()
      .int()
      .positive()
      .default(10)
      .describe('Planner steps before the loop stops (10: room for a few lookups and computations).'),
    timeLimitMs: z
      .number()
      .positive()
      .default(300_000)
      .describe('Wall-clock budget of one task in milliseconds (default 5 minutes).'),
    repeatLimit: z
      .number()
      .int()
      .min(2)
      .default(2)
      .describe('Stop when the same action with the same input occurs this many times in a row (2: repeated once).'),
    toolErrorStreak: z
      .number()
      .int()
      .positive()
      .default(3)
      .describe('Stop after this many consecutive tool calls that returned an error.'),
  })
  .strict();

export type RuleSettings = z.output<typeof ruleSettingsSchema>;
export type RuleSettingsInput = z.input<typeof ruleSettingsSchema>;
