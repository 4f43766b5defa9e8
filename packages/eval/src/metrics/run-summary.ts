import { z } from 'zod';

/** Accuracy of one evaluation, with its 95% Wilson interval. */
export const evaluationSummarySchema = z.object({
  accuracy: z.number().min(0).max(1).describe('Fraction of held-out tasks answered correctly.'),
  ci95: z.tuple([z.number(), z.number()]).describe('95% Wilson score interval of the accuracy.'),
  correct: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  meanSteps: z.number().nonnegative().optional(),
  meanStepsSolved: z.number().nonnegative().nullable().optional().describe('Mean planner steps of the tasks answered right (null when none was).'),
  meanToolCalls: z.number().nonnegative().optional(),
  formatErrorRate: z.number().min(0).max(1).optional(),
});
export type EvaluationSummary = z.infer<typeof evaluationSummarySchema>;

/** `summary.json` of a run: what a script or the report reads. */
export const runSummarySchema = z.object({
  name: z.string(),
  credit: z.string().describe("DAPO's step credit: process-sum, process-min, outcome or mix."),
  task: z
    .object({ kind: z.string(), description: z.string(), train: z.number().int(), test: z.number().int() })
    .optional()
    .describe('The task source: its kind, what it read, and the items of each split (after the leakage guard).'),
  leakage: z
    .object({
      checked: z.object({ train: z.number().int(), test: z.number().int() }),
      threshold: z.number(),
      method: z.enum(['near-duplicate', 'identity']),
      onLeak: z.enum(['refuse', 'drop']),
      pairs: z.array(z.object({ trainId: z.string(), testId: z.string(), score: z.number() })),
      dropped: z.array(z.string()),
    })
    .optional()
    .describe('The train/test near-duplicate check run before any stage: what was compared, the pairs found, the training items dropped.'),
  warmStart: evaluationSummarySchema.optional().describe('Before warm start (the random model), when measured.'),
  before: evaluationSummarySchema.describe('Held-out accuracy before DAPO (after the warm start).'),
  after: evaluationSummarySchema.describe('Held-out accuracy after DAPO.'),
  paired: z
    .object({ test: z.string(), pValue: z.number(), onlyBefore: z.number(), onlyAfter: z.number() })
    .optional()
    .describe('Paired comparison of before and after on the same items.'),
  prm: z.object({
    mse: z.number(),
    mse_constant: z.number().describe('MSE of predicting the mean training label.'),
    pearson: z.number().nullable().describe('Null when undefined (constant labels or scores).'),
    spearman: z.number().nullable().describe('Null when undefined (constant labels or scores).'),
    n: z.number().int().nonnegative().optional(),
    calibration: z
      .array(z.object({ predicted: z.number(), observed: z.number(), count: z.number().int() }))
      .optional()
      .describe('Held-out labels binned by predicted score.'),
  })
    .optional()
    .describe('The PRM on held-out labels; absent when the run used outcome credit only.'),
  prmOnPolicy: z
    .object({
      steps: z.number().int().positive(),
      first: z.object({ mse: z.number(), constant: z.number() }),
      last: z.object({ mse: z.number(), constant: z.number() }),
    })
    .optional()
    .describe(
      "The PRM on DAPO's own rollouts, first and last five steps: squared error of its score of each rollout's last decision against the outcome, and the constant predictor's. mse / constant rising from first to last would mean the PRM went stale as the policy moved. Absent without step scores.",
    ),
  stepOutcome: z
    .object({
      labeller: z.string().describe("Who labelled the steps: 'monte-carlo' (the share of completions after the step that succeed), 'judge', or 'mixed'."),
      successful: z.number().int().nonnegative().describe('Successful collected trajectories with at least one labelled step.'),
      failed: z.number().int().nonnegative().describe('Failed collected trajectories with at least one labelled step.'),
      successfulWithBadStep: z
        .number()
        .min(0)
        .max(1)
        .nullable()
        .describe('Share of the successful ones with a step labelled below 0.5: where outcome credit rewards a bad step. Null when there are none.'),
      failedWithGoodStep: z
        .number()
        .min(0)
        .max(1)
        .nullable()
        .describe('Share of the failed ones with a step labelled 0.5 or more: where outcome credit penalises a good step. Null when there are none.'),
    })
    .optional()
    .describe(
      "Where the outcome broadcast and the step labels disagree on the collected trajectories (@agentflow/eval's stepOutcomeDisagreement over labels.jsonl); absent without labels (outcome or gigpo credit).",
    ),
  checks: z
    .array(
      z.object({
        name: z.enum(['warm-start', 'prm', 'train']).describe('The stage whose result was checked.'),
        ok: z.boolean().describe('False when the stage fell short of its own check; the report says so at the top.'),
        message: z.string(),
      }),
    )
    .optional()
    .describe("The stages' checks of their own results: a warm start that needed retries, a PRM no better than a constant, DAPO stopped early."),
  durationSeconds: z.number().nonnegative().optional(),
});
export type RunCheck = NonNullable<RunSummary['checks']>[number];
export type RunSummary = z.infer<typeof runSummarySchema>;
