import { createRandom } from '@agentflow/core';
import type { Qwen3Config } from '../config/qwen3-config';
import { expectedWeightShapes, type ModelWeights } from './weight-names';

/** A configuration together with its weights: everything the forward pass needs. */
export interface Qwen3Model {
  config: Qwen3Config;
  weights: ModelWeights;
}

/** How random weights are drawn. */
export interface RandomModelSettings {
  /** Std of the normal draws for matrices; default `config.initializerRange` (HF: 0.02). */
  std?: number;
  /** Std of noise added to the RMSNorm weights (HF initialises them to exactly 1); default 0. */
  normNoise?: number;
}

/**
 * Random weights with Hugging Face's initialisation (normal(0, initializer_range) matrices, unit
 * norms), reproducible from `seed`: each tensor draws from its own fork of the seeded generator so
 * one tensor's values do not depend on the shapes of the others.
 */
export function createRandomModel(config: Qwen3Config, seed: number, settings: RandomModelSettings = {}): Qwen3Model {
  const random = createRandom(seed);
  const std = settings.std ?? config.initializerRange;
  const normNoise = settings.normNoise ?? 0;
  const weights: ModelWeights = new Map();
  for (const [name, shape] of expectedWeightShapes(config)) {
    const stream = random.fork(name);
    const size = shape.reduce((product, dimension) => product * dimension, 1);
    const data = new Float32Array(size);
    const isNorm = name.endsWith('norm.weight');
    for (let index = 0; index < size; index++) {
      data[index] = isNorm ? 1 + normNoise * stream.normal() : std * stream.normal();
    }
    weights.set(name, { shape, data });
  }
  return { config, weights };
}
