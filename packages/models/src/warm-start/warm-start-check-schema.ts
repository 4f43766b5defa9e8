import { z } from 'zod';

/**
 * The warm start's check of its own result, as a config block ({@link WarmStartCheck}, the
 * `check` of runSupervisedWarmStart; null: none). A warm start that ends with a high loss or that
 * cannot answer held-back training tasks hands DAPO a planner whose rollouts all fail (no
 * group with mixed rewards, nothing to learn from): the run stops there with what it reached. The
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
      .describe('Accuracy on the held-back tasks the warm start must reach (at the rollout temperature). Default 0.2.'),
    maxLoss: z.number().positive().default(0.15).describe("The last epoch's mean loss the warm start must not exceed. Default 0.15."),
    abandon: z
      .object({
        afterEpoch: z.number().int().positive().default(3).describe('The epoch after which the loss is looked at. Default 3.'),
        aboveLoss: z.number().positive().default(0.3).describe('A warm start whose loss is above this then is stopped at once. Default 0.3.'),
      })
      .strict()
      .nullable()
      .default(null)
      .describe(
        'Stop a warm start early, failed, when its loss is still above `aboveLoss` after `afterEpoch` (`{}`: after epoch 3 above 0.3), instead of finishing its epochs. Default null: never; a slow start can still pass (seed 9 of the default: loss 0.496 after epoch 3, then 0.164, 0.109, 0.087).',
      ),
    // Removed on 2026-12-03: a config that still sets it is told why instead of "unrecognized key".
    attempts: z
      .never({
        error:
          'warmStart.check.attempts is gone: a warm start is no longer retried from new initialisations (the plain planner trained in full passes at the first); remove the key, and raise epochs or lower the check if the warm start fails',
      })
      .optional(),
  })
  .strict()
  .nullable()
  .prefault({})
  .describe('The check of the warm start (null: none; any result is accepted).');
