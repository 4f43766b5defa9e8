import { AgentFlowError, describeValue } from '@agentflow/core';
import { boundedK3 } from './reference-kl';

/** Flat per-token inputs of the clipped surrogate; every array is [tokens]. */
export interface ClippedSurrogateInput {
  newLogprobs: ArrayLike<number>;
  oldLogprobs: ArrayLike<number>;
  advantages: ArrayLike<number>;
  /** Aggregation weights (see aggregationTokenWeights); 0 removes a token. */
  tokenWeights: ArrayLike<number>;
  /** Needed only when klCoefficient > 0. */
  referenceLogprobs?: ArrayLike<number>;
}

export interface ClippedSurrogateSettings {
  /** Lower clip range: the ratio is clipped from below at 1 - epsLow; 0 <= epsLow < 1. */
  epsLow: number;
  /** Upper clip range, decoupled ("clip-higher"): the ratio is clipped from above at 1 + epsHigh; epsHigh >= 0. */
  epsHigh: number;
  /** Coefficient of the k3 KL estimator against the reference policy (bounded: see boundedK3); 0 (default) turns it off. */
  klCoefficient?: number;
}

export interface ClippedSurrogateResult {
  /** The objective of {@link clippedSurrogate}. */
  loss: number;
  /** [tokens] d loss / d newLogprobs; 0 where the clipped branch is active. */
  gradient: Float64Array;
  /** Fraction of counted tokens (weight > 0) whose ratio was clipped. */
  clipFraction: number;
  lowClipFraction: number;
  highClipFraction: number;
  /** Mean over counted tokens of k3(old, new): an estimate of KL(new || old). */
  approxKl: number;
  /** Weighted sum of the bounded k3(reference, new), the KL term before its coefficient (0 when off). */
  referenceKl: number;
  /** Number of counted tokens. */
  tokens: number;
}

/** Throws INVALID_ARGUMENT unless 0 <= epsLow < 1 and epsHigh >= 0. */
export function assertClipRange(settings: ClippedSurrogateSettings): void {
  if (!(settings.epsLow >= 0 && settings.epsLow < 1) || !(settings.epsHigh >= 0)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Clip range needs 0 <= epsLow < 1 and epsHigh >= 0, got epsLow ${describeValue(settings.epsLow)}, epsHigh ${describeValue(settings.epsHigh)}.`,
    });
  }
}

/**
 * DAPO's clipped surrogate (decoupled eps_low / eps_high), the one statement of the objective:
 * per token with weight w > 0, r = exp(new - old) and
 *   loss = -sum(w * min(r A, clip(r, 1 - epsLow, 1 + epsHigh) A)) + beta * sum(w * k3(ref, new))
 * with k3 bounded as in {@link boundedK3}. Tokens with w = 0 (padding) count nowhere. This is
 * the typed-array form, with the exact gradient with respect to the new log-probs: where the
 * clipped branch is strictly smaller the term is constant in the new log-probs, so its
 * gradient is 0; otherwise d term / d new = r A. The ONNX-graph form that trains through
 * autodiff (`clippedSurrogateTerms` of `@agentflow/dapo/graph`) is tested against this one.
 */
export function clippedSurrogate(
  input: ClippedSurrogateInput,
  settings: ClippedSurrogateSettings,
): ClippedSurrogateResult {
  const count = input.newLogprobs.length;
  for (const [name, values] of [
    ['oldLogprobs', input.oldLogprobs],
    ['advantages', input.advantages],
    ['tokenWeights', input.tokenWeights],
  ] as const) {
    if (values.length !== count) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `${name} has ${values.length} entries but newLogprobs has ${count}.`,
      });
    }
  }
  assertClipRange(settings);
  const beta = settings.klCoefficient ?? 0;
  const reference = input.referenceLogprobs;
  if (beta !== 0 && (reference === undefined || reference.length !== count)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `klCoefficient ${beta} needs referenceLogprobs with ${count} entries, got ${reference === undefined ? 'none' : reference.length}.`,
    });
  }
  const lower = 1 - settings.epsLow;
  const upper = 1 + settings.epsHigh;
  const gradient = new Float64Array(count); // [tokens]
  let objective = 0;
  let referenceKl = 0;
  let tokens = 0;
  let lowClipped = 0;
  let highClipped = 0;
  let approxKlSum = 0;
  for (let token = 0; token < count; token++) {
    const weight = input.tokenWeights[token] as number;
    if (weight === 0) continue;
    const logNew = input.newLogprobs[token] as number;
    const logOld = input.oldLogprobs[token] as number;
    const advantage = input.advantages[token] as number;
    const ratio = Math.exp(logNew - logOld);
    const clippedRatio = Math.min(Math.max(ratio, lower), upper);
    const unclippedTerm = ratio * advantage;
    const clippedTerm = clippedRatio * advantage;
    tokens += 1;
    if (clippedTerm < unclippedTerm) {
      objective += weight * clippedTerm;
      if (ratio < lower) lowClipped += 1;
      else highClipped += 1;
    } else {
      objective += weight * unclippedTerm;
      gradient[token] = -weight * unclippedTerm;
    }
    const logOldOverNew = logOld - logNew;
    approxKlSum += Math.exp(logOldOverNew) - logOldOverNew - 1;
    if (beta !== 0) {
      const k3 = boundedK3(reference?.[token] as number, logNew);
      referenceKl += weight * k3.value;
      gradient[token] = (gradient[token] as number) + beta * weight * k3.gradient;
    }
  }
  return {
    loss: -objective + beta * referenceKl,
    gradient,
    clipFraction: tokens === 0 ? 0 : (lowClipped + highClipped) / tokens,
    lowClipFraction: tokens === 0 ? 0 : lowClipped / tokens,
    highClipFraction: tokens === 0 ? 0 : highClipped / tokens,
    approxKl: tokens === 0 ? 0 : approxKlSum / tokens,
    referenceKl,
    tokens,
  };
}
