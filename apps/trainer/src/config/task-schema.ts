import { layerParameterCount, qwen3HeadDim, qwen3ShapeIssues } from '@agentflow/models';
import { z } from 'zod';

/** A benchmark file of a dataset task source (@agentflow/eval `DatasetSource`). */
const datasetSource = z
  .object({
    path: z
      .string()
      .min(1)
      .describe('A dataset file: an AgentFlow JSON benchmark (aime24.json...), the AIME CSV, or JSONL. Relative paths are resolved from the working directory.'),
    format: z.enum(['agentflow-json', 'aime-csv', 'jsonl']).describe('File format.'),
    years: z
      .tuple([z.number().int(), z.number().int()])
      .optional()
      .describe('Keep only rows whose id starts with a year in this inclusive range (AIME CSV).'),
    limit: z.number().int().positive().optional().describe('Keep the first N items after filtering.'),
    fields: z
      .object({
        id: z.string().min(1).optional(),
        question: z.string().min(1).optional(),
        answer: z.string().min(1).optional(),
        prompt: z.string().min(1).optional(),
      })
      .strict()
      .optional()
      .describe('Field names when the file\'s differ from the format\'s (JSONL default: id, question, answer).'),
  })
  .strict();

/** What every task source shares: the leakage guard run before any stage. */
const leakageFields = {
  leakageThreshold: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe('Near-duplicate score (@agentflow/eval findNearDuplicates) at which a test item counts as leaked into training.'),
  onLeakage: z
    .enum(['refuse', 'drop'])
    .default('refuse')
    .describe("What a leak does: 'refuse' stops the run (and the dry run) naming the pairs; 'drop' removes the leaked training items and lists them in summary.json."),
};

/**
 * Upper bounds of the world's settings, checked before the world is generated: 50,000 training
 * tasks take about 11 s to generate on this project's 2-core machine (800 take 0.2 s), so
 * 100,000 is a minute at most, not a hang (1e12 never ends). The planner's bounds keep the
 * preset, a model trained on the CPU, far below what a Float32Array or the memory can hold.
 */
export const WORLD_BOUNDS = {
  entities: 2_000,
  trainTasks: 100_000,
  testTasks: 10_000,
  maxValue: 1_000_000,
  hiddenSize: 4_096,
  layers: 64,
  heads: 64,
  intermediateSize: 16_384,
  bpeMerges: 100_000,
  /** Parameters of the decoder layers (embeddings aside): 10^9 is 4 GB of float32, already far past a CPU planner. */
  layerParameters: 1e9,
} as const;

/** What the planner block calls the sizes @agentflow/models' shape rules name. */
const PLANNER_SHAPE_KEYS = { hiddenSize: 'hiddenSize', numAttentionHeads: 'heads', numKeyValueHeads: 'keyValueHeads' } as const;

/** The planner's Qwen3 shape rules (@agentflow/models), each issue at its key, and the size bound of a CPU planner. */
function checkPlannerShape(planner: { hiddenSize: number; layers: number; heads: number; keyValueHeads: number; intermediateSize: number }, context: z.RefinementCtx): void {
  const shape = { hiddenSize: planner.hiddenSize, intermediateSize: planner.intermediateSize, numAttentionHeads: planner.heads, numKeyValueHeads: planner.keyValueHeads };
  for (const { key, message } of qwen3ShapeIssues(shape, PLANNER_SHAPE_KEYS)) context.addIssue({ code: 'custom', path: [key], message });
  if (!Number.isInteger(qwen3HeadDim(shape))) return; // no whole heads, no layer to count
  const parameters = planner.layers * layerParameterCount(shape);
  if (parameters > WORLD_BOUNDS.layerParameters) {
    context.addIssue({
      code: 'custom',
      path: ['layers'],
      message: `the planner's decoder layers would hold ${parameters} parameters, more than ${WORLD_BOUNDS.layerParameters} (a preset planner trains on the CPU; give policy.model.path for a larger model)`,
    });
  }
}

/** The generated task world of @agentflow/eval, with the random planner and the teacher made for it. */
const worldTaskSchema = z
  .object({
    kind: z.literal('world'),
    seed: z.number().int().default(7).describe('Seed of the generated task world.'),
    entities: z.number().int().positive().max(WORLD_BOUNDS.entities).default(24).describe('Entities in the world corpus (fewer: each name recurs more, so copying it is learned).'),
    trainTasks: z.number().int().positive().max(WORLD_BOUNDS.trainTasks).default(800).describe('Training tasks the world generates.'),
    testTasks: z.number().int().positive().max(WORLD_BOUNDS.testTasks).default(60).describe('Held-out tasks the world generates.'),
    levels: z.array(z.number().int().min(1).max(3)).min(1).default([1, 2]).describe('Lookups per question.'),
    maxValue: z.number().int().min(2).max(WORLD_BOUNDS.maxValue).default(9).describe('Largest number in a fact.'),
    ...leakageFields,
    planner: z
      .object({
        hiddenSize: z.number().int().positive().max(WORLD_BOUNDS.hiddenSize).default(128).describe('Width of the residual stream.'),
        layers: z.number().int().positive().max(WORLD_BOUNDS.layers).default(2).describe('Decoder layers.'),
        heads: z.number().int().positive().max(WORLD_BOUNDS.heads).default(4).describe('Query heads per layer.'),
        keyValueHeads: z.number().int().positive().max(WORLD_BOUNDS.heads).default(4).describe('Key/value heads; must divide heads.'),
        intermediateSize: z.number().int().positive().max(WORLD_BOUNDS.intermediateSize).default(256).describe('Width of the SiLU-gated MLP.'),
        embeddingStd: z.number().positive().default(0.5).describe('Std of the random embedding table (HF draws 0.02; LoRA cannot train it).'),
        sharedDirection: z
          .number()
          .nonnegative()
          .default(1)
          .describe('One fixed random direction added to every embedding, relative to the token part: gives q and k a constant to attend by position.'),
        wordClassDirection: z
          .number()
          .nonnegative()
          .default(1)
          .describe('One direction per word class (names, numbers, counted things) added to its tokens, relative to the token part.'),
        identityInit: z.number().nonnegative().default(1.5).describe('Added to the diagonal of v_proj and o_proj: a base that passes tokens on (copying).'),
        ropeTheta: z
          .number()
          .positive()
          .default(10000)
          .describe('RoPE base. A small base gives every frequency pair a short period: sharp attention by relative position in short prompts.'),
        qkNormGain: z
          .number()
          .positive()
          .default(3)
          .describe('Initial weight of q_norm and k_norm. LoRA cannot train norms, and at 1 an attention logit is at most sqrt(head_dim): too flat to copy one token.'),
        bpeMerges: z.number().int().nonnegative().max(WORLD_BOUNDS.bpeMerges).default(300).describe('BPE merges learned between the whole-word tokens (names, numbers).'),
      })
      .strict()
      .superRefine(checkPlannerShape)
      .prefault({})
      .describe('The random planner the world creates for `policy.model: { preset: tiny }`: its Qwen3 shape, the initialisation that lets LoRA alone learn the world, and its BPE tokenizer learned from the demonstrations.'),
    teacher: z
      .object({
    errorRate: z
      .number()
      .min(0)
      .max(1)
      .default(0.4)
      .describe(
        "Fraction of the demonstrations that carry one of the expert's mistakes (mistakes) and answer what it leads to: an imperfect teacher, as real SFT data is. 0: the world's exact expert.",
      ),
    mistakes: z
      .array(z.enum(['operator', 'lookup']))
      .min(1)
      .default(['lookup'])
      .describe("The mistakes of the imperfect expert, one drawn per flawed demonstration: 'operator' (another operator in the code), 'lookup' (another counted thing looked up, and used)."),
      })
      .strict()
      .prefault({})
      .describe('The expert whose demonstrations the warm start learns from.'),
  })
  .strict();

/** Benchmark files: a training split and a held-out split. */
const datasetsTaskSchema = z
  .object({
    kind: z.literal('datasets'),
    train: datasetSource.describe('The training split, e.g. the AIME CSV with years [1983, 2023].'),
    test: datasetSource.describe('The held-out split, e.g. aime24.json.'),
    ...leakageFields,
  })
  .strict();

/** Training and held-out tasks: the generated world (the default) or benchmark files. */
export const taskSchema = z
  .discriminatedUnion('kind', [worldTaskSchema, datasetsTaskSchema])
  .prefault({ kind: 'world' })
  .describe('Where the tasks come from: a task source of @agentflow/eval.');

export type WorldTaskConfig = z.infer<typeof worldTaskSchema>;
export type DatasetsTaskConfig = z.infer<typeof datasetsTaskSchema>;
