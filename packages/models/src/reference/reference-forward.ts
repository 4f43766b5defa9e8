import { AgentFlowError } from '@agentflow/core';
import { biasedModules, hasQueryKeyNorm } from '../config/decoder-architecture';
import type { DecoderConfig } from '../config/decoder-config';
import { ropeInverseFrequencies } from '../config/rope-scaling';
import { float32WeightData, type LinearModule, linearPath, lmHeadName, type ModelWeights } from '../weights/weight-names';

/**
 * An independent float64 forward pass in plain TypeScript, written from the semantics of Hugging
 * Face `modeling_qwen3.py`, `modeling_qwen2.py` and `modeling_llama.py` (RMSNorm, attention with
 * Qwen3's q_norm/k_norm before RoPE or Qwen2's q/k/v biases, rotate_half RoPE, repeat_kv, eager
 * attention with scaling head_dim^-0.5, the SiLU-gated MLP). It shares no graph code with the ONNX
 * graph and exists to check it; the RoPE frequencies (ropeInverseFrequencies, with llama3 or linear
 * scaling) are the one definition both use, checked independently by bench/pytorch_qwen3.py. One
 * unpadded sequence at a time: O(n^2) loops.
 */
export interface ReferenceOutput {
  /** [seq, hidden]: the final hidden states after `model.norm`. */
  hidden: Float64Array[];
  /** [seq, vocab]: log-softmax of the logits at each position. */
  logprobs: Float64Array[];
}

function tensor(weights: ModelWeights, name: string): Float32Array {
  const found = weights.get(name);
  if (!found) throw new AgentFlowError({ code: 'NOT_FOUND', message: `Weight ${name} is missing.`, details: { name } });
  return float32WeightData(name, found, 'The reference forward');
}

/** y = W x (+ b) for a row-major W of shape [out, in]. */
function linear(weight: Float32Array, x: Float64Array, out: number, bias?: Float32Array): Float64Array {
  const width = x.length;
  const y = new Float64Array(out);
  for (let row = 0; row < out; row++) {
    let sum = bias ? bias[row]! : 0;
    const offset = row * width;
    for (let column = 0; column < width; column++) sum += weight[offset + column]! * x[column]!;
    y[row] = sum;
  }
  return y;
}

/** HF's RMSNorm: x * rsqrt(mean(x^2) + eps) * weight, over slices of `width`. */
function rmsNorm(x: Float64Array, weight: Float32Array, eps: number, width: number): Float64Array {
  const y = new Float64Array(x.length);
  for (let start = 0; start < x.length; start += width) {
    let sumSquares = 0;
    for (let index = 0; index < width; index++) sumSquares += x[start + index]! ** 2;
    const scale = 1 / Math.sqrt(sumSquares / width + eps);
    for (let index = 0; index < width; index++) y[start + index] = x[start + index]! * scale * weight[index]!;
  }
  return y;
}

/** Rotate-half RoPE in place on each head of `x` ([heads * headDim]) at `position`. */
function applyRope(x: Float64Array, headDim: number, position: number, inverseFrequencies: Float64Array): void {
  const half = headDim / 2;
  for (let start = 0; start < x.length; start += headDim) {
    for (let index = 0; index < half; index++) {
      const angle = position * inverseFrequencies[index]!;
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      const first = x[start + index]!;
      const second = x[start + index + half]!;
      // x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x2, x1); cos/sin repeat over both halves.
      x[start + index] = first * cos - second * sin;
      x[start + index + half] = second * cos + first * sin;
    }
  }
}

function logSoftmax(logits: Float64Array): Float64Array {
  let max = Number.NEGATIVE_INFINITY;
  for (const value of logits) max = Math.max(max, value);
  let sum = 0;
  for (const value of logits) sum += Math.exp(value - max);
  const logSum = max + Math.log(sum);
  return logits.map((value) => value - logSum);
}

/** Runs the reference model over one sequence of token ids. */
export function referenceForward(config: DecoderConfig, weights: ModelWeights, ids: readonly number[]): ReferenceOutput {
  const { hiddenSize, headDim, numAttentionHeads, numKeyValueHeads, intermediateSize, rmsNormEps } = config;
  const embedding = tensor(weights, 'model.embed_tokens.weight');
  const groupSize = numAttentionHeads / numKeyValueHeads;
  const inverseFrequencies = ropeInverseFrequencies(config.ropeTheta, headDim, config.ropeScaling);
  const biased = new Set(biasedModules(config));
  const queryKeyNorm = hasQueryKeyNorm(config);
  let states = ids.map((id) => Float64Array.from(embedding.subarray(id * hiddenSize, (id + 1) * hiddenSize)));
  for (let layer = 0; layer < config.numHiddenLayers; layer++) {
    const prefix = `model.layers.${layer}`;
    const project = (module: LinearModule, x: Float64Array, out: number) =>
      linear(tensor(weights, `${linearPath(layer, module)}.weight`), x, out, biased.has(module) ? tensor(weights, `${linearPath(layer, module)}.bias`) : undefined);
    // Qwen3's per-head RMSNorm of q and k; the identity for Qwen2 and Llama.
    const headNorm = (y: Float64Array, name: 'q_norm' | 'k_norm') =>
      queryKeyNorm ? rmsNorm(y, tensor(weights, `${prefix}.self_attn.${name}.weight`), rmsNormEps, headDim) : y;
    const queries: Float64Array[] = [];
    const keys: Float64Array[] = [];
    const values: Float64Array[] = [];
    states.forEach((state, position) => {
      const x = rmsNorm(state, tensor(weights, `${prefix}.input_layernorm.weight`), rmsNormEps, hiddenSize);
      const q = headNorm(project('q_proj', x, numAttentionHeads * headDim), 'q_norm');
      const k = headNorm(project('k_proj', x, numKeyValueHeads * headDim), 'k_norm');
      applyRope(q, headDim, position, inverseFrequencies);
      applyRope(k, headDim, position, inverseFrequencies);
      queries.push(q);
      keys.push(k);
      values.push(project('v_proj', x, numKeyValueHeads * headDim));
    });
    const scaling = headDim ** -0.5;
    states = states.map((state, position) => {
      const attention = new Float64Array(numAttentionHeads * headDim);
      for (let head = 0; head < numAttentionHeads; head++) {
        const kvHead = Math.floor(head / groupSize); // repeat_kv
        const scores = new Float64Array(position + 1); // causal: keys 0..position
        for (let key = 0; key <= position; key++) {
          let dot = 0;
          for (let index = 0; index < headDim; index++) {
            dot += queries[position]![head * headDim + index]! * keys[key]![kvHead * headDim + index]!;
          }
          scores[key] = dot * scaling;
        }
        const probabilities = logSoftmax(scores).map(Math.exp);
        for (let key = 0; key <= position; key++) {
          for (let index = 0; index < headDim; index++) {
            attention[head * headDim + index]! += probabilities[key]! * values[key]![kvHead * headDim + index]!;
          }
        }
      }
      const projected = project('o_proj', attention, hiddenSize);
      const afterAttention = state.map((value, index) => value + projected[index]!);
      const x = rmsNorm(afterAttention, tensor(weights, `${prefix}.post_attention_layernorm.weight`), rmsNormEps, hiddenSize);
      const gate = project('gate_proj', x, intermediateSize);
      const up = project('up_proj', x, intermediateSize);
      const activated = gate.map((value, index) => (value / (1 + Math.exp(-value))) * up[index]!); // SiLU(gate) * up
      const down = project('down_proj', activated, hiddenSize);
      return afterAttention.map((value, index) => value + down[index]!);
    });
  }
  const hidden = states.map((state) => rmsNorm(state, tensor(weights, 'model.norm.weight'), rmsNormEps, hiddenSize));
  const head = tensor(weights, lmHeadName(config));
  return { hidden, logprobs: hidden.map((state) => logSoftmax(linear(head, state, config.vocabSize))) };
}

/** Log-probs of each completion token given the prompt, by the reference model. */
export function referenceCompletionLogprobs(
  config: DecoderConfig,
  weights: ModelWeights,
  promptIds: readonly number[],
  completionIds: readonly number[],
): number[] {
  if (promptIds.length === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'The prompt must hold at least one token.' });
  }
  const ids = [...promptIds, ...completionIds];
  const { logprobs } = referenceForward(config, weights, ids);
  return completionIds.map((id, index) => logprobs[promptIds.length + index - 1]![id]!);
}
