/**
 * Bounds of the k3 KL estimator, as verl's low-variance KL: the log-ratio is clamped to
 * [-20, 20] and each token's estimate to at most 10. k3 = exp(x) - x - 1 with
 * x = log reference - log policy grows exponentially in x: one sampled token the policy has
 * come to find 10^6 times less likely than its reference would outweigh a whole batch (an
 * unbounded run went from 0.03 to 1117 nats per token in one step, its gradient norm from
 * 0.04 to 1255). Past a bound the token contributes the bound and no gradient.
 */
export const KL_LOG_RATIO_BOUND = 20;
export const KL_TOKEN_BOUND = 10;

/** One token's bounded k3 estimate of KL(policy || reference) and its derivative with respect to log policy. */
export function boundedK3(logReference: number, logPolicy: number): { value: number; gradient: number } {
  const raw = logReference - logPolicy;
  const x = Math.min(Math.max(raw, -KL_LOG_RATIO_BOUND), KL_LOG_RATIO_BOUND);
  const value = Math.exp(x) - x - 1;
  if (value > KL_TOKEN_BOUND) return { value: KL_TOKEN_BOUND, gradient: 0 };
  // d/d logPolicy of exp(x) - x - 1 with x = logReference - logPolicy.
  return { value, gradient: x === raw ? 1 - Math.exp(x) : 0 };
}
