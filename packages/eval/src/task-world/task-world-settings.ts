import { AgentFlowError } from '@agentflow/core';
import { z } from 'zod';

export const taskWorldSettingsSchema = z
  .object({
    seed: z.number().int().default(0).describe('Seed of the generator: the same seed gives the same world.'),
    entities: z
      .number()
      .int()
      .min(4)
      .max(2000)
      .default(48)
      .describe('Entities (corpus documents). 48 keeps the corpus tiny while giving thousands of distinct questions.'),
    trainTasks: z.number().int().min(1).default(400).describe('Tasks in the train split.'),
    testTasks: z.number().int().min(1).default(100).describe('Tasks in the held-out test split (a 80/20 split by default).'),
    levels: z
      .array(z.union([z.literal(1), z.literal(2), z.literal(3)]))
      .min(1)
      .default([1, 2])
      .describe('Difficulty levels to draw from, equally often: 1 = one lookup, 2 = two lookups, 3 = three lookups; each then one python call.'),
    minValue: z.number().int().min(0).default(2).describe('Smallest fact value.'),
    maxValue: z.number().int().min(1).default(15).describe('Largest fact value; 15 keeps every answer at most 225.'),
    // The two settings below have no zod default: absent, the world (settings included) is byte for byte the one before them.
    decoyRate: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe(
        'Share of the facts that also have a stale entry (`Riri had 7 cats (outdated).`), which the plain lookup `Riri cats` returns first; the check `Riri cats now` finds the current one. Absent: 0, no decoys.',
      ),
    stepSlack: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Decisions each task allows beyond its exact expert's (lookups, checks of stale entries, python, finish): every task gets `maxSteps`, so a wasted step costs. Absent: no per-task budget (the run's own step limit).",
      ),
  })
  .strict()
  .refine((settings) => settings.minValue < settings.maxValue, { message: 'minValue must be below maxValue', path: ['maxValue'] });

export type TaskWorldSettings = z.input<typeof taskWorldSettingsSchema>;
export type ResolvedTaskWorldSettings = z.output<typeof taskWorldSettingsSchema>;

export function parseTaskWorldSettings(settings: TaskWorldSettings = {}): ResolvedTaskWorldSettings {
  const parsed = taskWorldSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid task world settings: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}
