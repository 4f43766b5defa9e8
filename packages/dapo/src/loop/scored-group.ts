import { AgentFlowError, type Random, type StepScorer, stepScoringInputs, type Trajectory } from '@agentflow/core';
import type { DapoConfig } from '../config/dapo-config';
import { softOverlongPenalty } from '../math/overlong';
import { needsStepScores } from '../math/step-credit';

/** What the outcome checker says about one trajectory. */
export interface OutcomeScore {
  /** The outcome reward (for example 1 correct, 0 wrong). */
  reward: number;
  /** Whether the answer was right; feeds the accuracy metric. */
  correct: boolean;
}

/** G rollouts of one prompt with their rewards, ready for credit assignment. */
export interface ScoredGroup {
  promptIndex: number;
  trajectories: Trajectory[];
  /** [G] outcome reward plus overlong penalty: what dynamic sampling and advantages see. */
  rewards: number[];
  /** [G] */
  correct: boolean[];
  /** [G][steps_i] process scores, when the step credit needs them. */
  stepScores?: number[][];
}

export interface ScoreGroupSettings<Prompt> {
  config: DapoConfig;
  prompt: Prompt;
  promptIndex: number;
  random: Random;
  sampleRollouts(prompt: Prompt, count: number, random: Random): Promise<Trajectory[]>;
  scoreOutcome(prompt: Prompt, trajectory: Trajectory): OutcomeScore | Promise<OutcomeScore>;
  stepScorer?: StepScorer;
}

/** Rolls out G trajectories of one prompt and scores them (outcome, overlong penalty, step scores). */
export async function rolloutScoredGroup<Prompt>(settings: ScoreGroupSettings<Prompt>): Promise<ScoredGroup> {
  const { config } = settings;
  const trajectories = await settings.sampleRollouts(settings.prompt, config.groupSize, settings.random);
  if (!Array.isArray(trajectories) || trajectories.length !== config.groupSize) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `sampleRollouts returned ${Array.isArray(trajectories) ? trajectories.length : typeof trajectories} trajectories for prompt ${settings.promptIndex}; expected groupSize = ${config.groupSize}.`,
    });
  }
  const rewards: number[] = [];
  const correct: boolean[] = [];
  for (const trajectory of trajectories) {
    assertTrainable(trajectory);
    const outcome = await settings.scoreOutcome(settings.prompt, trajectory);
    if (!Number.isFinite(outcome.reward)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `scoreOutcome returned reward ${outcome.reward} for trajectory ${trajectory.id}; expected a finite number.`,
      });
    }
    const longest = Math.max(0, ...trajectory.steps.map((step) => step.completionTokenIds?.length ?? 0));
    const penalty = config.overlong.enabled ? softOverlongPenalty(longest, config.overlong) : 0;
    rewards.push(outcome.reward + penalty);
    correct.push(outcome.correct);
  }
  const group: ScoredGroup = { promptIndex: settings.promptIndex, trajectories, rewards, correct };
  if (needsStepScores(config.credit)) group.stepScores = await scoreSteps(trajectories, settings.stepScorer);
  return group;
}

function assertTrainable(trajectory: Trajectory): void {
  trajectory.steps.forEach((step, index) => {
    const tokens = step.completionTokenIds;
    const logprobs = step.completionLogprobs;
    if (step.promptTokenIds === undefined || tokens === undefined) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Step ${index} of trajectory ${trajectory.id} has no promptTokenIds/completionTokenIds; DAPO needs rollouts from a local policy that records token ids.`,
      });
    }
    if (logprobs !== undefined && logprobs.length !== tokens.length) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `Step ${index} of trajectory ${trajectory.id} has ${tokens.length} completion tokens but ${logprobs.length} log-probs.`,
      });
    }
  });
}

/** Stored step rewards when every trajectory has them, else the StepScorer. */
async function scoreSteps(trajectories: Trajectory[], scorer: StepScorer | undefined): Promise<number[][]> {
  if (trajectories.every((trajectory) => trajectory.stepRewards?.length === trajectory.steps.length)) {
    return trajectories.map((trajectory) => [...(trajectory.stepRewards as number[])]);
  }
  if (scorer === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: 'The configured step credit needs process scores: pass a stepScorer (the PRM) or rollouts with stepRewards, or use credit { kind: "outcome" }.',
    });
  }
  const inputs = trajectories.flatMap((trajectory) => stepScoringInputs(trajectory));
  const scores = await scorer.score(inputs);
  if (scores.length !== inputs.length || scores.some((score) => !Number.isFinite(score))) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The StepScorer returned ${scores.length} scores for ${inputs.length} steps (all must be finite numbers).`,
    });
  }
  let offset = 0;
  return trajectories.map((trajectory) => {
    const row = trajectory.steps.map((step, index) => (step.action === null ? 0 : (scores[offset + index] as number)));
    offset += trajectory.steps.length;
    return row;
  });
}
