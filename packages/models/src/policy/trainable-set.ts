import { AgentFlowError, describeValue } from '@agentflow/core';
import { z } from 'zod';

/** Train a LoRA adapter over frozen base weights (PEFT's default; the policy's default). */
export interface LoraTrainableSet {
  kind: 'lora';
}

/**
 * Train the base weights themselves (full-parameter fine-tuning), except those a `frozen`
 * pattern matches. A pattern is a Hugging Face weight name in which `*` stands for any run of
 * characters, dots included (`model.layers.*.input_layernorm.weight`, `model.embed_tokens.*`,
 * `*norm.weight`); every other character stands for itself and a pattern must match the whole
 * name. A pattern that matches no weight of the model is an error naming it.
 */
export interface FullTrainableSet {
  kind: 'full';
  /** Patterns of the weights to keep frozen; default none (every weight trains). */
  frozen?: readonly string[];
}

/** What a local policy trains: a LoRA adapter, or the base weights (some frozen). */
export type TrainableSet = LoraTrainableSet | FullTrainableSet;

/** {@link TrainableSet} as a config block: `{ kind: 'lora' }` or `{ kind: 'full', frozen?: [...] }`. */
export const trainableSetSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('lora').describe('Train a LoRA adapter (the `lora` block) over frozen base weights.'),
    }),
    z.strictObject({
      kind: z.literal('full').describe('Train every base weight (full-parameter fine-tuning), except the frozen ones.'),
      frozen: z
        .array(z.string().min(1))
        .default([])
        .describe(
          'Weights kept frozen, as Hugging Face names where `*` stands for any run of characters, dots included (e.g. "model.embed_tokens.weight", "model.layers.*.input_layernorm.weight"); each pattern must match a weight. Default none.',
        ),
    }),
  ])
  .describe('What the policy trains: `{ kind: "lora" }` (default) or `{ kind: "full", frozen?: [patterns] }`.');

/** Whether `name` matches `pattern` (`*`: any run of characters, dots included; the whole name). */
export function matchesWeightPattern(pattern: string, name: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's').test(name);
}

/**
 * The names of `weights` that train under `frozen`, in their order. Throws INVALID_ARGUMENT
 * naming a pattern that matches no weight (a typo would otherwise train what it meant to freeze),
 * or when every weight is frozen.
 */
export function trainableWeightNames(weights: Iterable<string>, frozen: readonly string[] = []): string[] {
  const names = [...weights];
  for (const pattern of frozen) {
    if (!names.some((name) => matchesWeightPattern(pattern, name))) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `The frozen pattern ${describeValue(pattern)} matches no weight of the model; weights are named as in Hugging Face checkpoints (e.g. ${describeValue(names.slice(0, 3))}) and \`*\` stands for any run of characters.`,
        details: { pattern },
      });
    }
  }
  const trainable = names.filter((name) => !frozen.some((pattern) => matchesWeightPattern(pattern, name)));
  if (trainable.length === 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The frozen patterns ${describeValue(frozen)} freeze every weight; nothing would train. Freeze fewer weights, or train a LoRA adapter.`,
      details: { frozen },
    });
  }
  return trainable;
}

/**
 * Whether AdamW's decoupled weight decay applies to a weight: not to norms and biases
 * (transformers' Trainer convention, `get_decay_parameter_names`: no decay for LayerNorm/RMSNorm
 * weights and biases), to every other matrix.
 */
export function decaysWeight(name: string): boolean {
  return !(name.endsWith('norm.weight') || name.endsWith('.bias'));
}
