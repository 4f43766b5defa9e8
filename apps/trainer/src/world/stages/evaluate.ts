import type { Stage } from '../../pipeline/run-stages';
import { evaluateWorldPolicy } from '../world-evaluation';
import type { WorldContext } from '../world-context';
import { openPlannerCheckpoint } from '../world-policy';

/** Held-out evaluation of the planner saved in checkpoint `checkpointName`. */
export function evaluationStage(name: string, checkpointName: string): Stage<WorldContext> {
  return {
    name,
    async run(context, emit) {
      const policy = await openPlannerCheckpoint(context, checkpointName);
      emit({ type: 'progress', stage: name, completed: 0, total: context.task.testTasks });
      const evaluation = await evaluateWorldPolicy(context, policy.languageModel, { progressStage: name, idPrefix: name });
      await policy.policy.release();
      emit({ type: 'progress', stage: name, completed: evaluation.correct.length, total: evaluation.correct.length, metrics: { accuracy: evaluation.summary.accuracy } });
      return evaluation;
    },
  };
}
