import { AgentFlowError, type Random } from '@agentflow/core';

/** How the next token is drawn from the logits. */
export interface SamplingSettings {
  /** 0 picks the most likely allowed token (greedy); otherwise logits are divided by it. */
  temperature: number;
  /** Keep only the k most likely tokens (0 or undefined: all). */
  topK?: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p (1 or undefined: all). */
  topP?: number;
}

/** A drawn token and its log-probability under the model (temperature 1, no filtering). */
export interface SampledToken {
  tokenId: number;
  logprob: number;
}

/** log(sum(exp(logits))) over the whole vocabulary, computed stably. */
export function logSumExp(logits: Float32Array): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < logits.length; index++) if (logits[index]! > max) max = logits[index]!;
  let sum = 0;
  for (let index = 0; index < logits.length; index++) sum += Math.exp(logits[index]! - max);
  return max + Math.log(sum);
}

/** Checks sampling settings once, with a clear error. */
export function validateSamplingSettings(settings: SamplingSettings): void {
  const { temperature, topK, topP } = settings;
  if (!(temperature >= 0) || !Number.isFinite(temperature)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `temperature must be a finite number >= 0, got ${temperature}.` });
  }
  if (topK !== undefined && (!Number.isInteger(topK) || topK < 0)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `topK must be an integer >= 0, got ${topK}.` });
  }
  if (topP !== undefined && !(topP > 0 && topP <= 1)) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `topP must be in (0, 1], got ${topP}.` });
  }
}

/**
 * Draws one token. `allowed` (token ids) restricts the choice, as grammar-constrained decoding
 * does; the returned log-prob is always the model's own (full vocabulary, temperature 1), the
 * quantity that policy-gradient methods compare with recomputed log-probs. `scratch` (at least the
 * candidate count long) holds the sampling weights; without it one is allocated, so a caller that
 * draws many tokens passes one of its own.
 */
export function sampleToken(
  logits: Float32Array,
  settings: SamplingSettings,
  random: Random,
  allowed?: ArrayLike<number>,
  scratch?: Float64Array,
): SampledToken {
  validateSamplingSettings(settings);
  const count = allowed ? allowed.length : logits.length;
  if (count === 0) {
    throw new AgentFlowError({ code: 'INTERNAL', message: 'No token is allowed at this step of constrained decoding.' });
  }
  const temperature = settings.temperature;
  const topK = settings.topK ?? 0;
  const topP = settings.topP ?? 1;
  if (temperature > 0 && topK === 0 && topP >= 1) return samplePlain(logits, temperature, random, allowed, scratch);
  const normaliser = logSumExp(logits);
  const pick = (tokenId: number): SampledToken => ({ tokenId, logprob: logits[tokenId]! - normaliser });
  // Candidate i without materialising the candidate list: over a 150k vocabulary a copy per step
  // cost more than the tiny model's forward pass.
  const idAt = allowed ? (index: number) => allowed[index]! : (index: number) => index;
  if (temperature === 0) {
    let best = idAt(0);
    for (let index = 1; index < count; index++) {
      const id = idAt(index);
      if (logits[id]! > logits[best]!) best = id;
    }
    return pick(best);
  }
  const candidates = Array.from({ length: count }, (_, index) => idAt(index));
  return pick(sampleFiltered(candidates, logits, temperature, topK, topP, random));
}

/**
 * Plain temperature sampling: the inverse CDF of softmax(logits / temperature) over the candidates
 * at one uniform draw. Each weight exp(logit / T - max) is computed once and kept in `scratch` for
 * the scan, and at temperature 1 over the whole vocabulary the weights are the terms of the
 * log-sum-exp itself (the same values summed in the same order), so that sum serves both: one
 * exp per logit instead of up to three, with every value, and so every draw, bit for bit as when
 * each pass recomputed its own.
 */
function samplePlain(logits: Float32Array, temperature: number, random: Random, allowed: ArrayLike<number> | undefined, scratch: Float64Array | undefined): SampledToken {
  const count = allowed ? allowed.length : logits.length;
  const weights = scratch && scratch.length >= count ? scratch : new Float64Array(count);
  // The log-sum-exp's maximum (logSumExp's comparison, which skips NaN) and the tempered one
  // (Math.max, which propagates it), each as its own formula has it.
  let max = Number.NEGATIVE_INFINITY;
  let sawNaN = false;
  for (let index = 0; index < logits.length; index++) {
    const logit = logits[index]!;
    if (logit > max) max = logit;
    else if (Number.isNaN(logit)) sawNaN = true;
  }
  // At temperature 1 over the whole vocabulary the tempered maximum is that maximum (NaN if any is).
  let temperedMax = sawNaN ? Number.NaN : max;
  if (allowed || temperature !== 1) {
    temperedMax = Number.NEGATIVE_INFINITY;
    if (allowed) for (let index = 0; index < count; index++) temperedMax = Math.max(temperedMax, logits[allowed[index]!]! / temperature);
    else for (let index = 0; index < count; index++) temperedMax = Math.max(temperedMax, logits[index]! / temperature);
  }
  const shared = !allowed && temperature === 1 && temperedMax === max;
  let sum = 0;
  for (let index = 0; index < logits.length; index++) {
    const weight = Math.exp(logits[index]! - max);
    if (shared) weights[index] = weight;
    sum += weight;
  }
  const normaliser = max + Math.log(sum);
  let total = sum;
  if (!shared) {
    total = 0;
    for (let index = 0; index < count; index++) {
      const weight = Math.exp(logits[allowed ? allowed[index]! : index]! / temperature - temperedMax);
      weights[index] = weight;
      total += weight;
    }
  }
  const pick = (index: number): SampledToken => {
    const tokenId = allowed ? allowed[index]! : index;
    return { tokenId, logprob: logits[tokenId]! - normaliser };
  };
  let threshold = random.next() * total;
  for (let index = 0; index < count; index++) {
    threshold -= weights[index]!;
    if (threshold < 0) return pick(index);
  }
  return pick(count - 1);
}

/** Top-k and/or top-p (nucleus) sampling over `candidates`: the pool is sorted by probability. */
function sampleFiltered(candidates: number[], logits: Float32Array, temperature: number, topK: number, topP: number, random: Random): number {
  let pool = topK > 0 ? topCandidates(candidates, logits, topK) : [...candidates].sort(byLogit(logits));
  let max = Number.NEGATIVE_INFINITY;
  for (const id of pool) max = Math.max(max, logits[id]! / temperature);
  const weights = pool.map((id) => Math.exp(logits[id]! / temperature - max));
  let total = weights.reduce((sum, weight) => sum + weight, 0);
  if (topP < 1) {
    // Nucleus: keep the shortest prefix reaching topP.
    let cumulative = 0;
    let keep = pool.length;
    for (let index = 0; index < pool.length; index++) {
      cumulative += weights[index]! / total;
      if (cumulative >= topP) {
        keep = index + 1;
        break;
      }
    }
    pool = pool.slice(0, keep);
    weights.length = keep;
    total = weights.reduce((sum, weight) => sum + weight, 0);
  }
  let threshold = random.next() * total;
  for (let index = 0; index < pool.length; index++) {
    threshold -= weights[index]!;
    if (threshold < 0) return pool[index]!;
  }
  return pool[pool.length - 1]!;
}

/** Descending logit, then ascending id: the order top-k and top-p work in. */
const byLogit = (logits: Float32Array) => (left: number, right: number) => logits[right]! - logits[left]! || left - right;

/**
 * The k best candidates in {@link byLogit} order without sorting them all: a quickselect finds
 * the k-th largest logit, then only the candidates above it (and the lowest ids among ties) are
 * sorted. Equal to sorting everything and keeping k.
 */
export function topCandidates(candidates: readonly number[], logits: Float32Array, k: number): number[] {
  if (k >= candidates.length) return [...candidates].sort(byLogit(logits));
  const values = Float64Array.from(candidates, (id) => logits[id]!);
  // Quickselect for the element of rank k - 1 in descending order.
  let low = 0;
  let high = values.length - 1;
  const target = k - 1;
  while (low < high) {
    const pivot = values[(low + high) >> 1]!;
    let left = low;
    let right = high;
    while (left <= right) {
      while (values[left]! > pivot) left++;
      while (values[right]! < pivot) right--;
      if (left <= right) {
        const swap = values[left]!;
        values[left] = values[right]!;
        values[right] = swap;
        left++;
        right--;
      }
    }
    if (target <= right) high = right;
    else if (target >= left) low = left;
    else break;
  }
  const threshold = values[target]!;
  const above = candidates.filter((id) => logits[id]! > threshold);
  const ties = candidates.filter((id) => logits[id]! === threshold).sort((left, right) => left - right);
  return [...above, ...ties.slice(0, k - above.length)].sort(byLogit(logits));
}

/**
 * Where the first stop string ends in `text`, searching only from `searchFrom` (earlier text was
 * checked before). Returns the index at which to cut the text, or -1.
 */
export function findStopString(text: string, stops: readonly string[], searchFrom = 0): number {
  let cut = -1;
  for (const stop of stops) {
    if (stop.length === 0) continue;
    const index = text.indexOf(stop, Math.max(0, searchFrom - stop.length + 1));
    if (index >= 0 && (cut < 0 || index < cut)) cut = index;
  }
  return cut;
}
