import { AgentFlowError, type ChatMessage, type LanguageModel } from '@agentflow/core';
import type { TaskItem, TaskSource } from '@agentflow/eval';
import type { RunAgent } from '../pipeline/agent';
import type { Demonstration } from '../sources/task-source-of';

/** One supervised sample of the warm start: a decision's prompt and the teacher's completion. */
export interface DemonstrationSample {
  taskId: string;
  prompt: ChatMessage[];
  completion: string;
}

/** A planner model that replays scripted actions, one per call, as JSON. */
function scriptedModel(actions: Demonstration['actions']): LanguageModel {
  let next = 0;
  return {
    specificationVersion: 'v1',
    provider: 'demonstration',
    modelId: 'expert',
    chat: async () => {
      const action = actions[next++];
      return { text: action ? JSON.stringify(action) : '', finishReason: 'stop', model: 'expert' };
    },
  };
}

/**
 * The teacher's demonstrations as training samples, with each step's prompt exactly as the
 * planner renders it: the real loop runs with a scripted model that replays the teacher's
 * actions and with the real tools, so the observations in later prompts are the ones a
 * rollout sees. An exact demonstration that does not reach its reference answer is an error
 * (the source and its tools disagree), never a silent bad sample.
 */
export async function demonstrationSamples(
  items: readonly TaskItem[],
  source: Pick<TaskSource, 'reward'>,
  teacher: (item: TaskItem) => Demonstration | undefined,
  agentOf: (model: LanguageModel) => RunAgent,
): Promise<DemonstrationSample[]> {
  const samples: DemonstrationSample[] = [];
  for (const item of items) {
    const demonstration = teacher(item);
    if (!demonstration) continue;
    const trajectory = await agentOf(scriptedModel(demonstration.actions)).run(item.question, { taskId: item.id, trajectoryId: `demo-${item.id}`, seed: 0 });
    if (demonstration.exact && (await source.reward(item, trajectory.answer ?? undefined)) < 1) {
      throw new AgentFlowError({
        code: 'INTERNAL',
        message: `The demonstration of ${item.id} answered ${JSON.stringify(trajectory.answer)} instead of ${item.answer}; its tool outputs were ${JSON.stringify(trajectory.steps.map((step) => step.toolResult?.output ?? step.toolResult?.error))}.`,
      });
    }
    for (const step of trajectory.steps) samples.push({ taskId: item.id, prompt: step.prompt, completion: step.completion });
  }
  return samples;
}
