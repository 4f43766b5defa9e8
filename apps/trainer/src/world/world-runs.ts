import type { LanguageModel, Trajectory } from '@agentflow/core';
import { runWorldAgent, type WorldAgentSettings } from './world-agent';
import type { WorldContext } from './world-context';

/** The agent settings of the run's config, with `model` as the planner. */
export function agentSettingsOf(context: WorldContext, model: LanguageModel): WorldAgentSettings {
  const { policy } = context.config;
  return {
    model,
    tools: context.tools.tools,
    maxSteps: policy.maxSteps,
    maxTokens: policy.maxNewTokens,
    temperature: policy.temperature,
  };
}

/** One agent run to make: the question, its ids and its sampling seed. */
export interface WorldRunJob {
  question: string;
  taskId: string;
  trajectoryId: string;
  seed: number;
}

/** Runs at once: the policy model batches the generations of concurrent runs. */
const RUNS_AT_ONCE = 16;

/**
 * Runs the jobs in batches of concurrent agents, in order; `onBatch` sees each batch's
 * trajectories as it finishes (to append them, or to report progress).
 */
export async function runWorldJobs(
  context: WorldContext,
  model: LanguageModel,
  jobs: readonly WorldRunJob[],
  onBatch?: (trajectories: Trajectory[], done: number) => void,
): Promise<Trajectory[]> {
  const settings = agentSettingsOf(context, model);
  const trajectories: Trajectory[] = [];
  for (let start = 0; start < jobs.length; start += RUNS_AT_ONCE) {
    const batch = await Promise.all(
      jobs
        .slice(start, start + RUNS_AT_ONCE)
        .map((job) => runWorldAgent(job.question, settings, { taskId: job.taskId, trajectoryId: job.trajectoryId, seed: job.seed })),
    );
    trajectories.push(...batch);
    onBatch?.(batch, trajectories.length);
  }
  return trajectories;
}
