import { z } from 'zod';

/**
 * The warm start's check of its own result, as a config block ({@link WarmStartCheck}, the
 * `check` of runSupervisedWarmStart; null: none). A warm start that ends with a high loss or that
 * cannot answer held-back training tasks hands DAPO a planner whose rollouts all fail (no
 * group with mixed rewards, nothing to learn from): such an attempt is retried from the next
 * initialisation, and the run stops with a clear message when every attempt failed. The
 * defaults are AgentFlow's default run's (a tiny planner on the generated world).
 */
export const warmStartCheckSchema = z
  .object({
    heldOutTasks: z
      .number()
      .int()
      .nonnegative()
      .default(40)
      .describe('The last N training tasks are held back from the demonstrations and answered after the warm start. Default 40.'),
    minAccuracy: z
      .number()
      .min(0)
      .max(1)
      .default(0.2)
      .describe('Accuracy on the held-back tasks an attempt must reach (at the rollout temperature). Default 0.2.'),
    maxLoss: z.number().positive().default(0.15).describe("The last epoch's mean loss an attempt must not exceed. Default 0.15."),
    abandon: z
      .object({
        afterEpoch: z.number().int().positive().default(3).describe('The epoch after which the loss is looked at. Default 3.'),
        aboveLoss: z.number().positive().default(0.3).describe('An attempt whose loss is above this then is abandoned at once. Default 0.3.'),
      })
      .strict()
      .nullable()
      .prefault({})
      .describe('Abandon a failing attempt early instead of finishing its epochs. Default after epoch 3 above loss 0.3.'),
    attempts: z
      .number()
      .int()
      .positive()
      .max(20)
      .default(6)
      .describe('Initialisations tried: attempt k draws the planner (preset) and its adapter with seed + 1000 k. Default 6 (seeds 0-4 of the default needed 3, 6, 1, 3 and 2 in the latest sweep).'),
  })
  .strict()
  .nullable()
  .prefault({})
  .describe('The check of the warm start (null: none; every attempt is accepted).');
