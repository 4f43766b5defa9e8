import { AgentFlowError, type ChatMessage, type Demonstration, type LanguageModel } from '@agentflow/core';
import type { Agent } from '../agent/create-agent';

/** One supervised sample of a warm start: a decision's prompt and the teacher's completion. */
export interface DemonstrationSample {
  taskId: string;
  prompt: ChatMessage[];
  completion: string;
}

/** What the replay needs of a task: its id and question (the reference answer, when known, names what an exact replay missed). */
export interface DemonstratedItem {
  id: string;
  question: string;
  answer?: string;
}

/**
 * Where demonstrations come from and how an answer is scored: `@agentflow/eval`'s `TaskSource`
 * is one. Items without a demonstration (or a source without `demonstration`) give no samples.
 */
export interface DemonstrationSource<Item extends DemonstratedItem> {
  demonstration?(item: Item): Demonstration | undefined;
  /** 1 for a right answer, 0 otherwise. */
  reward(item: Item, answer: string | undefined): Promise<number>;
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
 * The source's demonstrations of `items`, asked in order, as supervised samples with each
 * step's prompt exactly as the planner renders it: the real loop runs with a scripted model
 * that replays the teacher's actions and with the real tools, so the observations in later
 * prompts are the ones a rollout sees. `agentOf` builds the agent with that model as its
 * planner, configured as the policy's rollouts are (template, tools, limits). An exact
 * demonstration that does not reach its reference answer is an INTERNAL error (the source and
 * its tools disagree), never a silent bad sample.
 */
export async function demonstrationSamples<Item extends DemonstratedItem>(
  items: readonly Item[],
  source: DemonstrationSource<Item>,
  agentOf: (model: LanguageModel) => Pick<Agent, 'run'>,
): Promise<DemonstrationSample[]> {
  const samples: DemonstrationSample[] = [];
  for (const item of items) {
    const demonstration = source.demonstration?.(item);
    if (!demonstration) continue;
    const trajectory = await agentOf(scriptedModel(demonstration.actions)).run(item.question, { taskId: item.id, trajectoryId: `demo-${item.id}`, seed: 0 });
    // A run that failed (a fixed module that does not answer, a time limit) says why, not that the source disagrees.
    if (trajectory.termination === 'error' || trajectory.termination === 'timeout') {
      throw new AgentFlowError({
        code: trajectory.termination === 'timeout' ? 'TIMEOUT' : 'RUNTIME_ERROR',
        message: `The demonstration of ${item.id} did not finish (${trajectory.termination}): ${trajectory.error ?? 'no reason recorded'}`,
        details: { taskId: item.id, termination: trajectory.termination },
      });
    }
    if (demonstration.exact && (await source.reward(item, trajectory.answer ?? undefined)) < 1) {
      throw new AgentFlowError({
        code: 'INTERNAL',
        message: `The demonstration of ${item.id} answered ${JSON.stringify(trajectory.answer)} instead of ${item.answer ?? 'the reference answer'}; its tool outputs were ${JSON.stringify(trajectory.steps.map((step) => step.toolResult?.output ?? step.toolResult?.error))}.`,
      });
    }
    for (const step of trajectory.steps) samples.push({ taskId: item.id, prompt: step.prompt, completion: step.completion });
  }
  return samples;
}
