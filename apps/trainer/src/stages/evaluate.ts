import type { Stage } from '@agentflow/core';
import { createRunAgent } from '../pipeline/agent';
import { evaluatePlanner } from '../pipeline/evaluate-planner';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openPlannerCheckpoint } from '../pipeline/planner-checkpoints';

/** Held-out evaluation of the planner saved in checkpoint `checkpointName`. */
export function evaluationStage(name: string, checkpointName: string): Stage<PipelineContext> {
  return {
    name,
    async run(context, emit) {
      const policy = await openPlannerCheckpoint(context, checkpointName);
      emit({ type: 'progress', stage: name, completed: 0, total: context.source.split('test').length });
      const evaluation = await evaluatePlanner(context, createRunAgent(context, policy.languageModel), { progressStage: name, idPrefix: name });
      await policy.policy.release();
      emit({ type: 'progress', stage: name, completed: evaluation.correct.length, total: evaluation.correct.length, metrics: { accuracy: evaluation.summary.accuracy } });
      return evaluation;
    },
  };
}
