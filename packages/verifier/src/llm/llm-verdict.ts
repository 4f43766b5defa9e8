import { type ChatMessage, type LanguageModel, llmVerdictSchema, type Verdict } from '@agentflow/core';
import { generateObject } from '@agentflow/llm';

export interface LlmVerdictInput {
  question: string;
  /** The in-task memory rendered as text. */
  memoryText: string;
  signal?: AbortSignal;
}

export interface LlmVerdictSettings {
  model: LanguageModel;
  /** Builds the messages; default: a short system + user prompt. */
  render?: (input: LlmVerdictInput) => ChatMessage[];
  /** Repair calls after an invalid reply (default 1). */
  maxRepairs?: number;
  temperature?: number;
  maxTokens?: number;
}

function defaultRender(input: LlmVerdictInput): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You check the work of an agent that answers a question with tools. Decide whether the steps so far already contain the final answer. Reply with one JSON object: {"analysis": "<one or two sentences>", "stop": true|false}.',
    },
    { role: 'user', content: `Question: ${input.question}\n\nSteps so far:\n${input.memoryText}` },
  ];
}

/**
 * Asks a model whether the loop can stop (core `llmVerdictSchema`, sent closed). Keys the
 * schema does not name (a `confidence`) are dropped, not a reason to repair (core
 * `parseModelReply`, through `generateObject`). A reply that never parses yields
 * "continue" with the failure in `analysis`: a verifier that cannot judge must not end the
 * task. Transport failures throw.
 */
export async function llmVerdict(input: LlmVerdictInput, settings: LlmVerdictSettings): Promise<Verdict> {
  const messages = (settings.render ?? defaultRender)(input);
  const result = await generateObject(settings.model, llmVerdictSchema, messages, {
    maxRepairs: settings.maxRepairs ?? 1,
    maxTokens: settings.maxTokens ?? 256,
    temperature: settings.temperature ?? 0,
    ...(input.signal ? { signal: input.signal } : {}),
  });
  if (!result.ok) {
    return { stop: false, reason: 'continue', analysis: `LLM verdict unusable (${result.error}); continuing.` };
  }
  return {
    stop: result.value.stop,
    reason: result.value.stop ? 'llm_stop' : 'continue',
    analysis: result.value.analysis,
  };
}
