import { evaluatePlanner as evaluateOnTasks, type PlannerEvaluation, type TaskItem } from '@agentflow/eval';
import { runAgentJobs } from '@agentflow/flow';
import type { RunAgent } from './agent';
import type { PipelineContext } from './pipeline-context';

export type { PlannerEvaluation };

/**
 * The run's planner on its held-out tasks (or on `tasks`): eval's `evaluatePlanner` with the
 * run's seed and task source, the runs batched by `runAgentJobs`, progress to the stage.
 */
export function evaluatePlanner(
  context: Pick<PipelineContext, 'config' | 'source' | 'emit'>,
  agent: RunAgent,
  settings: { progressStage?: string; idPrefix: string; tasks?: readonly TaskItem[] },
): Promise<PlannerEvaluation> {
  const { progressStage } = settings;
  return evaluateOnTasks({
    tasks: settings.tasks ?? context.source.split('test'),
    source: context.source,
    runJobs: (jobs, onBatch) => runAgentJobs(agent, jobs, { onBatch }),
    seed: context.config.seed,
    idPrefix: settings.idPrefix,
    ...(progressStage ? { onProgress: (completed: number, total: number) => context.emit({ type: 'progress', stage: progressStage, completed, total }) } : {}),
  });
}
