// Random Qwen3 weights for GPU benchmarks, fast enough for the 8B shape.
import { float32ToBfloat16Array, float32ToFloat16Array } from '../../packages/tensor/dist/index.js';

/**
 * Random weights fast: 2^20 - 3 normal draws (xorshift32 + Box-Muller) scaled by the init std,
 * tiled over every matrix from a per-tensor offset; norms are 1. Drawing 8 billion normals one
 * by one would take about 10 minutes in JavaScript; tiling is a memcpy (seconds for 8B).
 * Values only matter for speed as far as they are finite and not denormal, which holds.
 * `shapes` is @agentflow/models' `expectedWeightShapes(config)`. With `dtype` float16 or bfloat16
 * the matrices are held in it (norms and other 1-D tensors stay float32, as loadModel holds them).
 */
export function fastRandomModel(config, shapes, seed = 1, dtype = 'float32') {
  const length = 1_048_573;
  const block = new Float32Array(length);
  let state = seed >>> 0 || 1;
  const uniform = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return (state + 0.5) / 4294967296;
  };
  for (let i = 0; i < length; i++) block[i] = config.initializerRange * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  // Half precision: the block is rounded once and its bit patterns tiled, as loadModel's `dtype` holds matrices.
  const half = dtype === 'float32' ? undefined : HALF[dtype];
  if (dtype !== 'float32' && half === undefined) throw new Error(`fastRandomModel: dtype must be float32, float16 or bfloat16, got ${JSON.stringify(dtype)}.`);
  const halfBlock = half?.encode(block);
  const weights = new Map();
  let offset = 0;
  for (const [name, shape] of shapes) {
    const size = shape.reduce((product, dimension) => product * dimension, 1);
    const matrix = shape.length === 2 && halfBlock !== undefined;
    const source = matrix ? halfBlock : block;
    const data = matrix ? new Uint16Array(size) : new Float32Array(size);
    if (name.endsWith('norm.weight')) data.fill(1);
    else {
      offset = (offset + 7919 * 131) % length;
      let start = offset;
      for (let i = 0; i < size; ) {
        const count = Math.min(length - start, size - i);
        data.set(source.subarray(start, start + count), i);
        i += count;
        start = 0;
      }
    }
    weights.set(name, matrix ? { dtype, shape, data } : { shape, data });
  }
  return { config, weights };
}

/** Float32 to half-precision bit patterns, one array at a time. */
const HALF = {
  float16: { encode: (values) => float32ToFloat16Array(values) },
  bfloat16: { encode: (values) => float32ToBfloat16Array(values) },
};

/** Parameters that take part in MatMuls: every linear layer and the LM head (the embedding lookup is not one). */
export function matmulParameters(config, weights) {
  let total = 0;
  for (const [name, tensor] of weights) if (name.includes('.layers.') && !name.endsWith('norm.weight')) total += tensor.data.length;
  return total + config.vocabSize * config.hiddenSize;
}
