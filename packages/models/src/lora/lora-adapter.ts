import { AgentFlowError, createRandom } from '@agentflow/core';
import { z } from 'zod';
import type { DecoderConfig } from '../config/decoder-config';
import { LINEAR_MODULES, type LinearModule, linearPath, linearShape } from '../weights/weight-names';

/** LoRA's rank and alpha as a config block names them: both required, no other key. */
export const loraShapeSchema = z.strictObject({
  rank: z.number().int().positive().describe('Rank r of the update.'),
  alpha: z.number().positive().describe('lora_alpha; the update is scaled by alpha / r (alpha / sqrt(r) with rsLoRA).'),
});
export type LoraShape = z.output<typeof loraShapeSchema>;

/** {@link loraShapeSchema} where either key may be left out for its default; `source` says where the defaults come from. */
export function loraShapeSchemaWithDefaults(defaults: LoraShape & { source: string }) {
  const { rank, alpha } = loraShapeSchema.shape;
  return loraShapeSchema.extend({
    rank: rank.default(defaults.rank).describe(`${rank.description} Default ${defaults.rank} (${defaults.source}).`),
    alpha: alpha.default(defaults.alpha).describe(`${alpha.description} Default ${defaults.alpha} (${defaults.source}).`),
  });
}

/** LoRA hyper-parameters; defaults follow PEFT's LoraConfig unless noted. */
export const loraSettingsSchema = z.object({
  ...loraShapeSchemaWithDefaults({ rank: 8, alpha: 16, source: "rank: PEFT's; alpha: 2r, where PEFT has 8" }).shape,
  targetModules: z
    .array(z.enum(LINEAR_MODULES))
    .min(1)
    .default(['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'])
    .describe('Linear modules that get an adapter ("all-linear" in PEFT terms by default).'),
  useRslora: z.boolean().default(false).describe('Scale by alpha / sqrt(r) (rsLoRA, Kalajdzievski 2023) instead of alpha / r.'),
});
export type LoraSettings = z.input<typeof loraSettingsSchema>;
export type LoraConfig = z.output<typeof loraSettingsSchema>;

/** One module's matrices: A [rank, in], B [out, rank], row-major (PEFT's lora_A/lora_B layout). */
export interface LoraMatrices {
  a: Float32Array;
  b: Float32Array;
  inFeatures: number;
  outFeatures: number;
}

/** A LoRA adapter: settings plus matrices keyed by `model.layers.{l}.{block}.{module}`. */
export interface LoraAdapter {
  config: LoraConfig;
  matrices: Map<string, LoraMatrices>;
}

/** Validates LoRA settings with a clear error. */
export function parseLoraSettings(settings: LoraSettings = {}): LoraConfig {
  const parsed = loraSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid LoRA settings: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    });
  }
  return parsed.data;
}

/** The multiplier of B A: alpha / r, or alpha / sqrt(r) with rsLoRA. */
export function loraScale(config: LoraConfig): number {
  return config.useRslora ? config.alpha / Math.sqrt(config.rank) : config.alpha / config.rank;
}

/** Every (path, module) an adapter with these settings covers, in layer order. */
export function loraTargets(modelConfig: DecoderConfig, config: LoraConfig): { path: string; module: LinearModule }[] {
  const targets: { path: string; module: LinearModule }[] = [];
  for (let layer = 0; layer < modelConfig.numHiddenLayers; layer++) {
    for (const module of LINEAR_MODULES) {
      if (config.targetModules.includes(module)) targets.push({ path: linearPath(layer, module), module });
    }
  }
  return targets;
}

/**
 * A fresh adapter as PEFT initialises one: A ~ kaiming-uniform(a = sqrt 5), i.e. U(-1/sqrt(in),
 * 1/sqrt(in)), and B = 0, so the adapted model starts equal to the base model.
 */
export function createLoraAdapter(modelConfig: DecoderConfig, settings: LoraSettings = {}, seed = 0): LoraAdapter {
  const config = parseLoraSettings(settings);
  const random = createRandom(seed);
  const matrices = new Map<string, LoraMatrices>();
  for (const { path, module } of loraTargets(modelConfig, config)) {
    const [outFeatures, inFeatures] = linearShape(modelConfig, module);
    const stream = random.fork(path);
    const bound = 1 / Math.sqrt(inFeatures);
    const a = new Float32Array(config.rank * inFeatures).map(() => (2 * stream.next() - 1) * bound);
    matrices.set(path, { a, b: new Float32Array(outFeatures * config.rank), inFeatures, outFeatures });
  }
  return { config, matrices };
}

/** A deep copy (the optimiser updates matrices in place). */
export function cloneLoraAdapter(adapter: LoraAdapter): LoraAdapter {
  const matrices = new Map<string, LoraMatrices>();
  for (const [path, m] of adapter.matrices) matrices.set(path, { ...m, a: m.a.slice(), b: m.b.slice() });
  return { config: { ...adapter.config, targetModules: [...adapter.config.targetModules] }, matrices };
}
