import type { ChatMessage, LanguageModel, Tool } from '@agentflow/core';
import { AgentFlowError } from '@agentflow/core';
import type { TaskWorld, TaskWorldSplit } from '@agentflow/eval';
import { runWorldAgent } from './world-agent';

export interface DemonstrationSample {
  taskId: string;
  prompt: ChatMessage[];
  completion: string;
}

/**
 * The expert demonstrations as training samples, with each step's prompt exactly as the
 * planner renders it: the real loop runs with a scripted model that replays the expert's
 * actions and with the real tools, so the observations in later prompts are the ones a
 * rollout sees. A demonstration that does not reach its answer is an error (the world and
 * the tools disagree), never a silent bad sample.
 */
export async function demonstrationSamples(
  world: TaskWorld,
  split: TaskWorldSplit,
  tools: readonly Tool[],
  limits: { maxSteps: number; maxTokens: number },
): Promise<DemonstrationSample[]> {
  const samples: DemonstrationSample[] = [];
  for (const task of world.split(split)) {
    const demonstration = world.demonstration(task.id);
    let next = 0;
    const expert: LanguageModel = {
      specificationVersion: 'v1',
      provider: 'demonstration',
      modelId: 'expert',
      chat: async () => {
        const step = demonstration.steps[next++];
        return { text: step ? JSON.stringify(step.action) : '', finishReason: 'stop', model: 'expert' };
      },
    };
    const trajectory = await runWorldAgent(
      task.question,
      { model: expert, tools, maxSteps: limits.maxSteps, maxTokens: limits.maxTokens, temperature: 0 },
      { taskId: task.id, trajectoryId: `demo-${task.id}`, seed: 0 },
    );
    if (!world.checkAnswer(task.id, trajectory.answer)) {
      throw new AgentFlowError({
        code: 'INTERNAL',
        message: `The demonstration of ${task.id} answered ${JSON.stringify(trajectory.answer)} instead of ${task.answer}; its tool outputs were ${JSON.stringify(trajectory.steps.map((step) => step.toolResult?.output ?? step.toolResult?.error))}.`,
      });
    }
    for (const step of trajectory.steps) samples.push({ taskId: task.id, prompt: step.prompt, completion: step.completion });
  }
  return samples;
}
