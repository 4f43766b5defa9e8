import { dapoConfigSchema } from '@agentflow/dapo';
import { loraShapeSchema, trainableSetSchema } from '@agentflow/models';
import { z } from 'zod';
import { isPlainObject } from '@agentflow/core';

/**
 * Where the embedded default departs from @agentflow/dapo's own defaults (which are the DAPO
 * paper's, for a 32B model on thousands of prompts), and why. Every other DAPO setting keeps
 * dapo's default. A config's `train` block is laid over these, so setting one knob leaves the
 * rest of the default in place; a `credit` or `dynamicSampling` of another `kind` replaces
 * the default's whole object.
 */
export const TRAIN_DEFAULTS = {
  trainable: { kind: 'lora' },
  lora: { rank: 16, alpha: 32 },
  evaluationTasks: 40,
  groupSize: 8,
  // promptsPerMiniBatch, when not set, is promptsPerBatch: one optimiser update per step.
  promptsPerBatch: 8,
  // A fresh rank-16 adapter on the plain planner trained in full (2026-12-03, trainer README):
  // at 5e-3 seeds 0, 1 and 5 collapsed after 5-10 steps (referenceKl 0.01 -> 0.3-0.7 in one
  // step, held-out accuracy to 17.5%); 2e-3 lifted seed 0 from 68.3% to 95.0%; 1e-3 climbed
  // steadily on every seed tried (referenceKl under 0.07).
  learningRate: 1e-3,
  // A short run starts at the peak (DAPO warms up for 20 of thousands of steps).
  warmupSteps: 0,
  // Then a half cosine to a tenth of the peak. Measured on the warm starts and PRMs of seeds
  // 0, 1, 2 and 4 (docs/perf.md, 2026-12-02): at a constant 5e-3 seed 0 collapsed after step 21
  // (46.7% -> 1.7%; the same with maxGradNorm 0.1 and with mixed credit); the cosine kept it
  // (+20.0) while keeping most of the other seeds' gains; a constant 2.5e-3 gained least.
  schedule: { kind: 'cosine', minRatio: 0.1 },
  // k3 KL to the frozen warm planner: under 0.05 nats per token over 30 steps (seeds 0 and 1).
  klCoefficient: 0.05,
  totalSteps: 30,
  evaluateEvery: 5,
  checkpointEvery: 1,
  // The outcome advantage plus the PRM's process-sum advantage (PRIME's combination of verifiable
  // and process rewards). Measured on seeds 0-9 (2026-12-05, trainer README): process-sum alone
  // gained +11.2 on seed 7, where the PRM went stale late in the run; the mix +20.8 there and
  // within 1.7 points of process-sum on the other nine (mean +25.4, lowest +19.2); lambda 0.5 and 2
  // gave +25.1 and +25.4.
  credit: { kind: 'mix', lambda: 1, process: { kind: 'process-sum' } },
  // No signal: dapo's own default, `either` with process credit (a group is kept when its outcomes
  // differ or its PRM scores vary), `outcome` with outcome or gigpo credit. Measured across seeds
  // 0-4 (2026-12-03, trainer README): gains within a few points of `outcome`'s on every seed, one
  // generation round a step instead of 2.6, and 1-7 groups a step of equal outcomes trained on.
  dynamicSampling: { kind: 'refill', maxRounds: 12 },
  // The world's decisions are 48 tokens at most: no overlong punishment.
  overlong: { enabled: false },
} as const;

/** `value` laid over `defaults`: objects merge key by key, unless their `kind` differs; anything else replaces. */
export function layOver(defaults: unknown, value: unknown): unknown {
  if (value === undefined) return defaults;
  if (!isPlainObject(defaults) || !isPlainObject(value)) return value;
  if ('kind' in value && value.kind !== defaults.kind) return value;
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, entry] of Object.entries(value)) merged[key] = layOver(defaults[key], entry);
  return merged;
}

/**
 * The `train` block: @agentflow/dapo's own schema (every knob: epsLow / epsHigh, aggregation,
 * overlong shaping with maxLength and cacheLength, dynamic sampling, updateEpochs, KL..., and
 * its cross-field checks), laid over {@link TRAIN_DEFAULTS}, plus the three settings of the
 * trainer's DAPO stage.
 */
export const trainSchema = z.preprocess(
  (value) => {
    const merged = layOver(TRAIN_DEFAULTS, value ?? {});
    if (!isPlainObject(merged) || merged.promptsPerMiniBatch !== undefined) return merged;
    return { ...merged, promptsPerMiniBatch: merged.promptsPerBatch };
  },
  dapoConfigSchema
    .safeExtend({
      trainable: trainableSetSchema.describe(
        "What DAPO trains: { kind: lora } (default), an adapter (train.lora); { kind: full, frozen?: [patterns] }, every weight of the warm planner (models/planner-warm, or checkpoints/policy-warm after a full warm start) but the frozen ones, checkpointed as Hugging Face folders (checkpoints/policy-final among them), with the warm planner loaded from its folder as the KL reference (one more copy of the model). Full needs its own train.learningRate, 1e-4 on the default world (LoRA's 5e-3 took held-out accuracy from 70% to 0% at step 1, 3e-4 to 50% in 30 steps; 1e-4 gave 70.0 -> 81.7% and 70.0 -> 75.0% on seeds 0 and 1: see the trainer README), and local rollouts: vLLM receives adapters, not whole weights.",
      ),
      lora: loraShapeSchema
        .nullable()
        .describe(
          "With train.trainable lora: a fresh LoRA for DAPO on the warm-started planner with its adapter merged (B = 0: step 1 starts at the warm policy, with Adam moments of its own); null: DAPO goes on training the warm-start adapter (policy.lora) and its Adam moments (at lr 3e-4 it barely moved, at 1e-3 it collapsed). Does not apply with train.trainable full (every weight trains, no adapter).",
        ),
      evaluationTasks: z
        .number()
        .int()
        .positive()
        .describe('Held-out tasks evaluated every evaluateEvery steps (the first N of the test split).'),
    })
    .describe(`DAPO: @agentflow/dapo's configuration, with the embedded default's values where they differ (TRAIN_DEFAULTS).`),
);

export type TrainConfig = z.infer<typeof trainSchema>;
