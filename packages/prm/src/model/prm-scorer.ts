import { AgentFlowError, type StepScorer } from '@agentflow/core';
import type { Prm } from './prm';

/**
 * The PRM as the trainer sees it: a core `StepScorer`. A null action (a step whose output
 * did not parse) scores 0 without running the model; the rest are scored in batches of
 * the PRM's `batchSize` through ONNX Runtime. A score that is not a finite number in
 * [0, 1] (it cannot happen with a sigmoid head, but a NaN weight would cause it) is an
 * error rather than a silent reward.
 */
export function createPrmScorer(prm: Prm): StepScorer {
  return {
    async score(inputs) {
      const scores = await prm.score(inputs);
      scores.forEach((score, index) => {
        if (!(score >= 0 && score <= 1)) {
          throw new AgentFlowError({
            code: 'RUNTIME_ERROR',
            message: `The PRM produced ${score} for input ${index}; scores must lie in [0, 1] (is the checkpoint corrupt?).`,
          });
        }
      });
      return scores;
    },
  };
}
