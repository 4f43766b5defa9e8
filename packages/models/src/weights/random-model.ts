import { createRandom } from '@agentflow/core';
import type { DecoderConfig } from '../config/decoder-config';
import { expectedWeightShapes, type ModelWeights } from './weight-names';

/** A configuration together with its weights: everything the forward pass needs. */
export interface DecoderModel {
  config: DecoderConfig;
  weights: ModelWeights;
}

/** {@link DecoderModel} under its first name: a model of any supported family. */
export type Qwen3Model = DecoderModel;

/** How random weights are drawn. */
export interface RandomModelSettings {
  /** Std of the normal draws for matrices; default `config.initializerRange` (HF: 0.02). */
  std?: number;
  /** Std of noise added to the RMSNorm weights (HF initialises them to exactly 1); default 0. */
  normNoise?: number;
  /** Std of the normal draws for biases (Qwen2's q/k/v; HF initialises them to exactly 0); default 0. */
  biasStd?: number;
}

/**
 * Random weights with Hugging Face's initialisation (normal(0, initializer_range) matrices, unit
 * norms, zero biases), reproducible from `seed`: each tensor draws from its own fork of the seeded
 * generator so one tensor's values do not depend on the shapes of the others (or on which other
 * tensors the family has).
 */
export function createRandomModel(config: DecoderConfig, seed: number, settings: RandomModelSettings = {}): DecoderModel {
  const random = createRandom(seed);
  const std = settings.std ?? config.initializerRange;
  const normNoise = settings.normNoise ?? 0;
  const biasStd = settings.biasStd ?? 0;
  const weights: ModelWeights = new Map();
  for (const [name, shape] of expectedWeightShapes(config)) {
    const stream = random.fork(name);
    const size = shape.reduce((product, dimension) => product * dimension, 1);
    const data = new Float32Array(size);
    const isNorm = name.endsWith('norm.weight');
    const isBias = name.endsWith('.bias');
    for (let index = 0; index < size; index++) {
      data[index] = isNorm ? 1 + normNoise * stream.normal() : isBias ? biasStd * stream.normal() : std * stream.normal();
    }
    weights.set(name, { shape, data });
  }
  return { config, weights };
}
