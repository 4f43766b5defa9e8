import { AgentFlowError, type Trajectory } from '@agentflow/core';
import type { Agent } from './create-agent';

/** One agent run to make: the question, the task and trajectory ids, its sampling seed and, optionally, its step budget. */
export interface AgentJob {
  question: string;
  taskId: string;
  trajectoryId: string;
  seed: number;
  /** The task's own step budget (`AgentRunSettings.maxSteps`: the smaller of it and the agent's limit). Default: the agent's. */
  maxSteps?: number;
}

/** Settings for {@link runAgentJobs}. */
export interface RunAgentJobsSettings {
  /**
   * Runs in flight at once. Default 16: a local policy batches the generations of concurrent
   * runs, so runs go faster together, up to its generation batch.
   */
  concurrency?: number;
  /** Sees each batch's trajectories as it finishes, with the number done so far (to append them, or to report progress). */
  onBatch?: (trajectories: Trajectory[], done: number) => void | Promise<void>;
}

/**
 * Runs `jobs` through `agent` in batches of concurrent runs, in order, and returns their
 * trajectories in job order. A run never throws for a failure inside it (see `runFlow`); an
 * `onBatch` that throws stops the jobs after its batch.
 */
export async function runAgentJobs(agent: Pick<Agent, 'run'>, jobs: readonly AgentJob[], settings: RunAgentJobsSettings = {}): Promise<Trajectory[]> {
  const concurrency = settings.concurrency ?? 16;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `runAgentJobs: concurrency must be a positive integer, got ${concurrency}.`, details: { concurrency } });
  }
  const trajectories: Trajectory[] = [];
  for (let start = 0; start < jobs.length; start += concurrency) {
    const batch = await Promise.all(jobs.slice(start, start + concurrency).map((job) => agent.run(job.question, job)));
    trajectories.push(...batch);
    await settings.onBatch?.(batch, trajectories.length);
  }
  return trajectories;
}
