// Random Qwen3 weights for GPU benchmarks, fast enough for the 8B shape.

/**
 * Random weights fast: 2^20 - 3 normal draws (xorshift32 + Box-Muller) scaled by the init std,
 * tiled over every matrix from a per-tensor offset; norms are 1. Drawing 8 billion normals one
 * by one would take about 10 minutes in JavaScript; tiling is a memcpy (seconds for 8B).
 * Values only matter for speed as far as they are finite and not denormal, which holds.
 * `shapes` is @agentflow/models' `expectedWeightShapes(config)`.
 */
export function fastRandomModel(config, shapes, seed = 1) {
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
  const weights = new Map();
  let offset = 0;
  for (const [name, shape] of shapes) {
    const size = shape.reduce((product, dimension) => product * dimension, 1);
    const data = new Float32Array(size);
    if (name.endsWith('norm.weight')) data.fill(1);
    else {
      offset = (offset + 7919 * 131) % length;
      let start = offset;
      for (let i = 0; i < size; ) {
        const count = Math.min(length - start, size - i);
        data.set(block.subarray(start, start + count), i);
        i += count;
        start = 0;
      }
    }
    weights.set(name, { shape, data });
  }
  return { config, weights };
}

/** Parameters that take part in MatMuls: every linear layer and the LM head (the embedding lookup is not one). */
export function matmulParameters(config, weights) {
  let total = 0;
  for (const [name, tensor] of weights) if (name.includes('.layers.') && !name.endsWith('norm.weight')) total += tensor.data.length;
  return total + config.vocabSize * config.hiddenSize;
}
