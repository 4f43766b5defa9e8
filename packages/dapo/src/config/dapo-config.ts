import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { needsStepScores } from '../math/step-credit';

const processCreditSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('process-sum').describe('DeepSeekMath 4.1.3: normalised step scores summed from each step on.') }),
  z.strictObject({
    kind: z.literal('process-min').describe('PURE: step scores weighted by softmax(-r / T), a soft minimum, then return-to-go.'),
    temperature: z.number().positive().default(0.1).describe('T of the soft minimum. Default 0.1 (PURE, arXiv 2504.15275).'),
  }),
]);

const stepCreditSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('outcome').describe('Flow-GRPO: the outcome advantage broadcast to every step.') }),
    ...processCreditSchema.options,
    z.strictObject({
      kind: z.literal('mix').describe('A_outcome + lambda * A_process.'),
      lambda: z.number().nonnegative().default(1).describe('Weight of the process advantage. Default 1 (AgentFlow: equal weight).'),
      process: processCreditSchema.prefault({ kind: 'process-sum' }).describe("Which process credit to mix in. Default 'process-sum' (DeepSeekMath 4.1.3)."),
    }),
    z.strictObject({
      kind: z
        .literal('gigpo')
        .describe(
          'GiGPO (Feng et al., 2025, arXiv 2505.10978): A_outcome + omega * A_step, A_step normalising the discounted return of each step among the steps of its group that act from the same state (the same earlier calls and results). Needs no PRM; the step level is normalised as `advantage` says, like the episode level.',
        ),
      gamma: z
        .number()
        .min(0)
        .max(1)
        .default(0.95)
        .describe('Discount of the outcome reward per step before the end: a step k steps before the last returns gamma^k x R. Default 0.95 (GiGPO: verl-agent gigpo examples algorithm.gamma, ROLL step_reward_gamma).'),
      omega: z
        .number()
        .nonnegative()
        .default(1)
        .describe('Weight of the step-level advantage. Default 1 (GiGPO Eq. 8; verl-agent algorithm.gigpo.step_advantage_w).'),
    }),
  ])
  .describe('How each planner step gets its advantage. Default outcome broadcast (Flow-GRPO), which needs no PRM.');

const groupSignalFields = {
  signal: z
    .enum(['outcome', 'prm', 'either'])
    .optional()
    .describe(
      "What makes a group worth training on: 'outcome', its outcome rewards differ (DAPO 3.2); 'prm', its PRM step scores vary (population std over all steps of all its rollouts >= prmStdThreshold; AgentFlow-Pro); 'either', one or the other. 'prm' and 'either' need a credit that uses step scores. Default 'either' with process-sum, process-min or mix credit, 'outcome' with outcome or gigpo credit (issue #30).",
    ),
  prmStdThreshold: z
    .number()
    .nonnegative()
    .optional()
    .describe('Population std of a group\'s step scores below which they do not vary (signal prm or either). Default 1e-3 (AgentFlow-Pro: "discard samples with near-zero variance, pstdev < 1e-3").'),
};

const dynamicSamplingSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('off').describe('Keep every group (GRPO).') }),
    z.strictObject({
      kind: z.literal('drop').describe('Drop groups without a learning signal (see signal); train on what is left.'),
      stdThreshold: z.number().nonnegative().default(1e-3).describe('Population std of the outcome rewards below which they are all equal. Default 1e-3 (specs/dapo-prm.md).'),
      ...groupSignalFields,
    }),
    z.strictObject({
      kind: z.literal('refill').describe('DAPO 3.2: drop such groups and sample more prompts until the batch is full.'),
      stdThreshold: z.number().nonnegative().default(1e-3).describe('Population std of the outcome rewards below which they are all equal. Default 1e-3 (specs/dapo-prm.md).'),
      ...groupSignalFields,
      maxRounds: z.number().int().positive().default(10).describe('Generation rounds before giving up with an error. Default 10 (verl DAPO recipe, max_num_gen_batches).'),
      promptsPerRound: z
        .number()
        .int()
        .positive()
        .optional()
        .describe('Prompts sampled per round; default: as many as groups are still missing (verl samples gen_batch_size).'),
    }),
  ])
  .describe("Dynamic sampling. Default 'refill' (DAPO section 3.2).");

/** Every DAPO hyper-parameter, with its default and where the default comes from. */
export const dapoConfigSchema = z
  .strictObject({
    groupSize: z.number().int().min(2).default(16).describe('G, rollouts per prompt. Default 16 (DAPO section 4.1).'),
    promptsPerBatch: z.number().int().positive().default(512).describe('Groups (prompts) per training step. Default 512 (DAPO section 4.1).'),
    promptsPerMiniBatch: z
      .number()
      .int()
      .positive()
      .default(32)
      .describe('Groups per optimiser update; a batch gives promptsPerBatch / promptsPerMiniBatch updates. Default 32 (DAPO 4.1: mini-batch of 512 responses = 32 prompts x 16).'),
    microBatchRows: z
      .number()
      .int()
      .positive()
      .default(8)
      .describe('Completions per accumulateGradients call; bounds memory, does not change the math. Default 8 (AgentFlow).'),
    microBatchTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Padded tokens (rows x longest prompt + completion) per micro-batch at most, besides microBatchRows: activation memory grows with this budget, not with the longest sequence times the rows. A row longer than the budget goes alone. Default none (rows only).',
      ),
    updateEpochs: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe('Passes over each batch (mu); old log-probs are recomputed once before them. Default 1 (TRL num_iterations, verl ppo_epochs).'),
    learningRate: z.number().positive().default(1e-6).describe('Peak learning rate. Default 1e-6 (DAPO section 4.1).'),
    warmupSteps: z.number().int().nonnegative().default(20).describe('Linear warm-up in training steps, then the schedule. Default 20 (DAPO section 4.1).'),
    schedule: z
      .discriminatedUnion('kind', [
        z.strictObject({ kind: z.literal('constant').describe('The peak learning rate to the end (DAPO section 4.1).') }),
        z.strictObject({
          kind: z.literal('cosine').describe('A half cosine from the peak down to minRatio x peak at the last step.'),
          minRatio: z.number().min(0).max(1).default(0.1).describe('The last step learning rate over the peak. Default 0.1 (as the warm start).'),
        }),
      ])
      .prefault({ kind: 'constant' })
      .describe("Learning rate after the warm-up. Default 'constant' (DAPO section 4.1)."),
    maxGradNorm: z.number().positive().default(1).describe('Gradient clipping by global norm. Default 1.0 (verl actor grad_clip).'),
    epsLow: z.number().min(0).lt(1).default(0.2).describe('Lower clip range eps_low. Default 0.2 (DAPO section 3.1).'),
    epsHigh: z.number().min(0).default(0.28).describe('Upper clip range eps_high, decoupled ("clip-higher"). Default 0.28 (DAPO section 3.1).'),
    klCoefficient: z.number().nonnegative().default(0).describe('Coefficient of the k3 KL term against a reference policy; 0 turns it off. Default 0 (DAPO section 2.3 removes the KL term).'),
    aggregation: z
      .enum(['token-mean', 'sequence-mean', 'dr-grpo'])
      .default('token-mean')
      .describe("Loss aggregation: 'token-mean' (DAPO 3.3), 'sequence-mean' (GRPO), 'dr-grpo' (constant normaliser). Default token-mean (DAPO section 3.3)."),
    drGrpoTokenBudget: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The constant of 'dr-grpo' aggregation; default overlong.maxLength, the generation budget (Dr. GRPO, arXiv 2503.20783)."),
    advantage: z
      .strictObject({
        stdEstimator: z.enum(['bessel', 'population']).default('bessel').describe("Group std estimator. Default 'bessel' (TRL and verl use torch.std)."),
        eps: z.number().nonnegative().default(1e-6).describe('Added to the std before dividing. Default 1e-6 (verl; TRL uses 1e-4).'),
        scaleByStd: z.boolean().default(true).describe('Divide by std + eps; false keeps only the mean baseline. Default true (GRPO, DAPO; Dr. GRPO sets false).'),
      })
      .prefault({})
      .describe('Group-relative advantages (specs/dapo-prm.md). Defaults per field.'),
    credit: stepCreditSchema.prefault({ kind: 'outcome' }),
    dynamicSampling: dynamicSamplingSchema.prefault({ kind: 'refill' }),
    overlong: z
      .strictObject({
        enabled: z.boolean().default(true).describe('Add the soft overlong penalty to the outcome reward. Default true (DAPO section 3.4).'),
        maxLength: z.number().int().positive().default(20480).describe('L_max in tokens. Default 20480 (DAPO section 4.1).'),
        cacheLength: z.number().int().nonnegative().default(4096).describe('L_cache in tokens. Default 4096 (DAPO section 4.1).'),
        penaltyFactor: z.number().nonnegative().default(1).describe('Scale of the penalty. Default 1 (verl overlong_buffer.penalty_factor).'),
      })
      .prefault({})
      .refine((value) => value.cacheLength <= value.maxLength, { message: 'overlong.cacheLength must be <= overlong.maxLength' })
      .describe('Soft overlong punishment (DAPO section 3.4), applied to the longest completion of a trajectory. Defaults per field.'),
    maskTruncated: z
      .boolean()
      .default(false)
      .describe('Mask truncated completions out of the loss (overlong filtering). Default false (DAPO section 3.4 keeps them and uses the soft penalty).'),
    totalSteps: z.number().int().positive().default(100).describe('Training steps (rollout batches) to run. Default 100 (AgentFlow).'),
    rolloutConcurrency: z.number().int().positive().default(8).describe('Prompts rolled out at once (p-queue). Default 8 (AgentFlow).'),
    checkpointEvery: z.number().int().nonnegative().default(10).describe('Save a checkpoint every N steps (and after the last); 0 only at the end. Default 10 (AgentFlow).'),
    evaluateEvery: z.number().int().nonnegative().default(10).describe('Call the evaluation function every N steps; 0 never. Default 10 (AgentFlow).'),
  })
  // Kept by `safeExtend`, so a schema built on this one (the trainer's `train` block) checks it too.
  .refine((value) => value.promptsPerMiniBatch <= value.promptsPerBatch, {
    message: 'promptsPerMiniBatch must be <= promptsPerBatch (a step cannot update on more groups than it samples)',
    path: ['promptsPerMiniBatch'],
  })
  .refine((value) => value.dynamicSampling.kind === 'off' || (value.dynamicSampling.signal ?? 'outcome') === 'outcome' || needsStepScores(value.credit), {
    message:
      "dynamicSampling.signal 'prm' or 'either' needs a credit that uses step scores (process-sum, process-min, mix): with outcome or gigpo credit a group whose outcomes are all equal trains on zero advantages. Use signal 'outcome' or a process credit.",
    path: ['dynamicSampling', 'signal'],
  })
  .describe('DAPO training configuration.');

/** A parsed DAPO configuration (every default filled in). */
export type DapoConfig = z.output<typeof dapoConfigSchema>;
/** What a user writes: every field optional. */
export type DapoConfigInput = z.input<typeof dapoConfigSchema>;

/** Parses a configuration, throwing an INVALID_CONFIG AgentFlowError that names each bad field. */
export function parseDapoConfig(input: unknown): DapoConfig {
  const parsed = dapoConfigSchema.safeParse(input ?? {});
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid DAPO config: ${formatZodIssues(parsed.error).join('; ')}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}
