/** Global L2 norm over all gradients (accumulated in float64, in name order for determinism). */
export function globalGradientNorm(gradients: Readonly<Record<string, Float32Array>>): number {
  let sum = 0;
  for (const name of Object.keys(gradients).sort()) {
    const values = gradients[name]!;
    for (let i = 0; i < values.length; i++) sum += values[i]! * values[i]!;
  }
  return Math.sqrt(sum);
}

/**
 * Scales all gradients in place so their global L2 norm is at most `maxNorm` (Pascanu et
 * al. 2013). Returns the norm before clipping and the factor applied (1 when not clipped).
 */
export function clipGradientsByGlobalNorm(
  gradients: Record<string, Float32Array>,
  maxNorm: number,
): { norm: number; scale: number } {
  const norm = globalGradientNorm(gradients);
  // The 1e-6 guard matches PyTorch's clip_grad_norm_.
  const scale = norm > maxNorm ? maxNorm / (norm + 1e-6) : 1;
  if (scale !== 1) for (const values of Object.values(gradients)) for (let i = 0; i < values.length; i++) values[i]! *= scale;
  return { norm, scale };
}
