import { layerParameterCount, qwen3HeadDim, qwen3ShapeIssues } from '@agentflow/models';
import { z } from 'zod';
import { WORLD_TEACHER_RECOVERIES } from '../task-world/world-recoveries';

/** A benchmark file of a dataset task source (`DatasetSource` as a settings block). */
export const datasetFileSettingsSchema = z
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

/** What every task source's settings share: the leakage guard (`checkSplitLeakage`) run before any stage. */
export const taskSourceLeakageFields = {
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
export const TASK_WORLD_BOUNDS = {
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

/** The words of the task settings that name a caller's own keys, for a caller (a config file) that has its own. */
export interface TaskSourceSettingsWording {
  /** What asks for the world's planner, in the planner block's description. Default `` `createPresetPlanner` of `openConfiguredTaskSource` ``. */
  plannerRequest?: string;
  /** Why a planner past `TASK_WORLD_BOUNDS.layerParameters` is refused and what to do instead, in brackets after the refusal. */
  oversizedPlanner?: string;
}

const DEFAULT_WORDING: Required<TaskSourceSettingsWording> = {
  plannerRequest: '`createPresetPlanner` of `openConfiguredTaskSource`',
  oversizedPlanner: "the world's planner trains on the CPU; bring a model folder for a larger model",
};

/** What the planner block calls the sizes @agentflow/models' shape rules name. */
const PLANNER_SHAPE_KEYS = { hiddenSize: 'hiddenSize', numAttentionHeads: 'heads', numKeyValueHeads: 'keyValueHeads' } as const;

/** The world planner's sizes as the planner block names them. */
export interface WorldPlannerSizes {
  hiddenSize: number;
  layers: number;
  heads: number;
  keyValueHeads: number;
  intermediateSize: number;
}

/**
 * What is wrong with a world planner's sizes, each at its key of the planner block: the Qwen3
 * shape rules of @agentflow/models (`qwen3ShapeIssues`), then the size bound of a CPU planner
 * (`TASK_WORLD_BOUNDS.layerParameters`, counted by `layerParameterCount`).
 */
export function worldPlannerShapeIssues(planner: WorldPlannerSizes, wording: TaskSourceSettingsWording = {}): Array<{ key: string; message: string }> {
  const shape = { hiddenSize: planner.hiddenSize, intermediateSize: planner.intermediateSize, numAttentionHeads: planner.heads, numKeyValueHeads: planner.keyValueHeads };
  const issues = qwen3ShapeIssues(shape, PLANNER_SHAPE_KEYS).map(({ key, message }) => ({ key, message }));
  if (!Number.isInteger(qwen3HeadDim(shape))) return issues; // no whole heads, no layer to count
  const parameters = planner.layers * layerParameterCount(shape);
  if (parameters > TASK_WORLD_BOUNDS.layerParameters) {
    const why = wording.oversizedPlanner ?? DEFAULT_WORDING.oversizedPlanner;
    issues.push({ key: 'layers', message: `the planner's decoder layers would hold ${parameters} parameters, more than ${TASK_WORLD_BOUNDS.layerParameters} (${why})` });
  }
  return issues;
}

/** The world's random planner (`createWorldPlannerFolder`'s `WorldPlannerShape`) as a settings block, its sizes checked. */
function worldPlannerSettingsSchemaWith(wording: TaskSourceSettingsWording) {
  const B = TASK_WORLD_BOUNDS;
  return z
    .object({
      hiddenSize: z.number().int().positive().max(B.hiddenSize).default(128).describe('Width of the residual stream.'),
      layers: z.number().int().positive().max(B.layers).default(2).describe('Decoder layers.'),
      heads: z.number().int().positive().max(B.heads).default(4).describe('Query heads per layer.'),
      keyValueHeads: z.number().int().positive().max(B.heads).default(4).describe('Key/value heads; must divide heads.'),
      intermediateSize: z.number().int().positive().max(B.intermediateSize).default(256).describe('Width of the SiLU-gated MLP.'),
      ropeTheta: z
        .number()
        .positive()
        .default(10000)
        .describe('RoPE base. A small base gives every frequency pair a short period: sharp attention by relative position in short prompts.'),
      bpeMerges: z.number().int().nonnegative().max(B.bpeMerges).default(300).describe('BPE merges learned between the whole-word tokens (names, numbers).'),
    })
    .strict()
    .superRefine((planner, context) => {
      for (const { key, message } of worldPlannerShapeIssues(planner, wording)) context.addIssue({ code: 'custom', path: [key], message });
    })
    .prefault({})
    .describe(
      `The random planner the world creates for ${wording.plannerRequest ?? DEFAULT_WORDING.plannerRequest}: its Qwen3 shape (transformers' random initialisation; the warm start trains it in full) and its BPE tokenizer learned from the demonstrations.`,
    );
}

/** The world's imperfect teacher (`WorldTaskSourceTeacher` without its seed, which the caller gives) as a settings block. */
export const worldTeacherSettingsSchema = z
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
      .array(z.enum(['operator', 'lookup', 'decoy']))
      .min(1)
      .default(['lookup'])
      .describe(
        "The mistakes of the imperfect expert, one drawn per flawed demonstration: 'operator' (another operator in the code), 'lookup' (another counted thing looked up, and used), 'decoy' (a stale entry used unchecked; needs decoyRate).",
      ),
    recoveryRate: z
      .number()
      .min(0)
      .max(1)
      .default(0.2)
      .describe(
        'Fraction of the demonstrations that make a mistake and recover from it, answering right one decision later (errorRate + recoveryRate at most 1). 0: no recoveries.',
      ),
    recoveries: z
      .array(z.enum(WORLD_TEACHER_RECOVERIES))
      .min(1)
      .optional()
      .describe(
        "The recovered mistakes, one drawn per recovering demonstration among those it allows: 'decoy' (computes with a stale value, then checks the lookup and computes again; needs decoyRate), 'python' (a NameError the retry fixes). Absent: both.",
      ),
  })
  .strict()
  .refine((teacher) => teacher.errorRate + (teacher.recoveryRate ?? 0) <= 1, {
    message: 'errorRate and recoveryRate add up to more than 1 (one draw per demonstration decides between them); lower one of them',
    path: ['recoveryRate'],
  })
  .prefault({})
  .describe('The expert whose demonstrations the warm start learns from.');

/** The generated task world, with the random planner and the teacher made for it. */
function worldTaskSettingsSchemaWith(wording: TaskSourceSettingsWording) {
  const B = TASK_WORLD_BOUNDS;
  return z
    .object({
      kind: z.literal('world'),
      seed: z.number().int().default(7).describe('Seed of the generated task world.'),
      entities: z.number().int().positive().max(B.entities).default(24).describe('Entities in the world corpus (fewer: each name recurs more, so copying it is learned).'),
      trainTasks: z.number().int().positive().max(B.trainTasks).default(800).describe('Training tasks the world generates.'),
      testTasks: z.number().int().positive().max(B.testTasks).default(240).describe('Held-out tasks the world generates.'),
      levels: z.array(z.number().int().min(1).max(3)).min(1).default([1, 2]).describe('Lookups per question.'),
      maxValue: z.number().int().min(2).max(B.maxValue).default(9).describe('Largest number in a fact.'),
      // The configured world has recoverable mistakes by default; 0 and null give the world
      // before them (every mistake fatal), byte for byte.
      decoyRate: z
        .number()
        .min(0)
        .max(1)
        .default(0.3)
        .describe(
          'Share of the facts that also have a stale entry (`Riri had 7 cats (outdated).`), which the plain lookup `Riri cats` returns first; the check `Riri cats now` finds the current one. 0: no decoys (with stepSlack null and teacher.recoveryRate 0, the world where every mistake is fatal).',
        ),
      stepSlack: z
        .number()
        .int()
        .min(0)
        .nullable()
        .default(2)
        .describe(
          "Decisions each task allows beyond its exact expert's (lookups, checks of stale entries, python, finish): every task gets its own step budget, so a wasted step costs. null: no per-task budget (the run's own step limit).",
        ),
      ...taskSourceLeakageFields,
      planner: worldPlannerSettingsSchemaWith(wording),
      teacher: worldTeacherSettingsSchema,
    })
    .strict()
    .superRefine((task, context) => {
      // A decoy mistake or recovery with no stale entry would never be drawn: the setting would do nothing.
      if (task.decoyRate) return;
      for (const key of ['mistakes', 'recoveries'] as const) {
        if (!task.teacher[key]?.includes('decoy')) continue;
        context.addIssue({ code: 'custom', path: ['teacher', key], message: `'decoy' needs stale entries to use: set decoyRate above 0, or leave 'decoy' out of teacher.${key}` });
      }
    });
}

/** Benchmark files: a training split and a held-out split. */
export const datasetsTaskSettingsSchema = z
  .object({
    kind: z.literal('datasets'),
    train: datasetFileSettingsSchema.describe('The training split, e.g. the AIME CSV with years [1983, 2023].'),
    test: datasetFileSettingsSchema.describe('The held-out split, e.g. aime24.json.'),
    ...taskSourceLeakageFields,
  })
  .strict();

/**
 * The settings of a run's tasks, as a config file spells them: the generated world (the
 * default, `{ kind: 'world' }`) or benchmark files (`{ kind: 'datasets', train, test }`),
 * with the leakage guard's settings. `openConfiguredTaskSource` opens them. `wording` names
 * the caller's own keys in a description and a refusal.
 */
export function taskSourceSettingsSchemaWith(wording: TaskSourceSettingsWording = {}) {
  return z
    .discriminatedUnion('kind', [worldTaskSettingsSchemaWith(wording), datasetsTaskSettingsSchema])
    .prefault({ kind: 'world' })
    .describe('Where the tasks come from: a task source of @agentflow/eval.');
}

/** {@link taskSourceSettingsSchemaWith} in the library's own words. */
export const taskSourceSettingsSchema = taskSourceSettingsSchemaWith();
/** The world's random planner as a settings block, in the library's own words. */
export const worldPlannerSettingsSchema = worldPlannerSettingsSchemaWith({});
/** The generated task world as a settings block (`kind: 'world'`), in the library's own words. */
export const worldTaskSettingsSchema = worldTaskSettingsSchemaWith({});

/** Parsed task settings: every default filled in. */
export type TaskSourceSettings = z.output<typeof taskSourceSettingsSchema>;
/** Parsed settings of the generated world. */
export type WorldTaskSettings = z.output<typeof worldTaskSettingsSchema>;
/** Parsed settings of benchmark files. */
export type DatasetsTaskSettings = z.output<typeof datasetsTaskSettingsSchema>;
/** One parsed benchmark file. */
export type DatasetFileSettings = z.output<typeof datasetFileSettingsSchema>;
