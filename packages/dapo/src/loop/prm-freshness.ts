import type { ScoredGroup } from './scored-group';

/**
 * How well the PRM still reads the policy it scores: over every rollout generated in one DAPO
 * step, the squared gap between the PRM's score of the rollout's last decision and its outcome
 * (1 right, 0 wrong). A last decision (the finish, as a rule) has the outcome itself as its
 * Monte-Carlo label, so this is the PRM's error on fresh on-policy data, and its `constant`
 * beside it is the error of predicting the step's accuracy for every rollout (p (1 - p)).
 * A PRM that goes stale as the policy moves shows as a ratio mse / constant that climbs over
 * the steps. Rollouts whose last decision did not parse (scored 0 by rule) are left out.
 */
export interface PrmOutcomeFit {
  /** Mean of (score of the last decision - outcome)^2. */
  mse: number;
  /** The same for the constant predictor at this step's accuracy. */
  constant: number;
  /** Rollouts counted. */
  rollouts: number;
}

/** {@link PrmOutcomeFit} over groups that carry step scores; null when none does (outcome or gigpo credit). */
export function prmOutcomeFit(groups: readonly Pick<ScoredGroup, 'trajectories' | 'correct' | 'stepScores'>[]): PrmOutcomeFit | null {
  const pairs: { score: number; outcome: number }[] = [];
  for (const group of groups) {
    if (group.stepScores === undefined) continue;
    group.trajectories.forEach((trajectory, rollout) => {
      const last = trajectory.steps.at(-1);
      const score = group.stepScores?.[rollout]?.at(-1);
      if (last === undefined || last.action === null || score === undefined) return;
      pairs.push({ score, outcome: group.correct[rollout] ? 1 : 0 });
    });
  }
  if (pairs.length === 0) return null;
  const accuracy = pairs.reduce((sum, pair) => sum + pair.outcome, 0) / pairs.length;
  const mse = pairs.reduce((sum, pair) => sum + (pair.score - pair.outcome) ** 2, 0) / pairs.length;
  return { mse, constant: accuracy * (1 - accuracy), rollouts: pairs.length };
}
