/**
 * The skill score of a predictor against a reference: 1 - error / referenceError, the share
 * of the reference's error it removes (Murphy 1988, "Skill scores based on the mean square
 * error"). 1 is perfect, 0 no better than the reference, negative worse. With the mean
 * squared errors of a PRM and of the constant predictor of the mean training label, it is
 * the PRM's "MSE reduction". NaN when the reference error is not positive (nothing to beat).
 */
export function skillScore(error: number, referenceError: number): number {
  return referenceError > 0 ? 1 - error / referenceError : Number.NaN;
}
