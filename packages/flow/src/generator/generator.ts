import type { ChatMessage, LanguageModel, PlannerAction } from '@agentflow/core';

export interface GeneratorInput {
  question: string;
  memory: { render(settings: { budgetChars: number; style: 'full' | 'compact' }): string };
  /** The planner's `finish` input, when the loop ended with one. */
  finishInput?: PlannerAction['action_input'];
  signal?: AbortSignal;
}

/** Writes the final answer when the loop stops. */
export interface Generator {
  generate(input: GeneratorInput): Promise<string | null>;
}

export interface GeneratorSettings {
  /** Writes the answer from memory; without one only the finish input can answer. */
  model?: LanguageModel;
  /** Use the planner's finish input as the answer when there is one (default true). */
  useFinishInput?: boolean;
  /** Character budget of the memory shown to the model (default 6000). */
  memoryBudgetChars?: number;
  maxTokens?: number;
  temperature?: number;
  /** Builds the messages; default: a short instruction, the question and the steps. */
  render?: (question: string, memoryText: string) => ChatMessage[];
}

/** The answer text of a finish input: a string as is, `{answer}` unwrapped, other objects as JSON. */
export function finishInputToAnswer(input: PlannerAction['action_input']): string {
  if (typeof input === 'string') return input.trim();
  const answer = (input as { answer?: unknown }).answer;
  if (typeof answer === 'string' || typeof answer === 'number') return String(answer).trim();
  return JSON.stringify(input);
}

function defaultRender(question: string, memoryText: string): ChatMessage[] {
  return [
    {
      role: 'system',
      content: 'Write the final answer to the question from the agent steps below. Reply with the answer only: no explanation.',
    },
    { role: 'user', content: `Question: ${question}\n\nSteps:\n${memoryText}\n\nFinal answer:` },
  ];
}

/**
 * Creates the generator: the finish input when configured and present (and not blank),
 * else the model writing from memory, else null.
 */
export function createGenerator(settings: GeneratorSettings = {}): Generator {
  const useFinishInput = settings.useFinishInput ?? true;
  return {
    async generate(input) {
      if (input.finishInput !== undefined && (useFinishInput || !settings.model)) {
        const answer = finishInputToAnswer(input.finishInput);
        // A blank finish says nothing: let the model answer from memory when there is one.
        if (answer !== '' || !settings.model) return answer === '' ? null : answer;
      }
      if (!settings.model) return null;
      const memoryText = input.memory.render({ budgetChars: settings.memoryBudgetChars ?? 6000, style: 'full' });
      const response = await settings.model.chat({
        messages: (settings.render ?? defaultRender)(input.question, memoryText),
        maxTokens: settings.maxTokens ?? 256,
        temperature: settings.temperature ?? 0,
        ...(input.signal ? { signal: input.signal } : {}),
      });
      const answer = response.text.trim().replace(/^(final answer|answer)\s*:\s*/i, '');
      return answer === '' ? null : answer;
    },
  };
}
