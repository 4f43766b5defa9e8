import { type LanguageModel, parseModelReply } from '@agentflow/core';
import { z } from 'zod';

/** What the judge must answer: its reasoning, then a verdict. */
export const judgeVerdictSchema = z
  .object({
    analysis: z.string().describe('Short comparison of the response with the reference answer.'),
    correct: z.boolean().describe('True when the response states the same final answer as the reference.'),
  })
  .strict();
export type JudgeVerdict = z.infer<typeof judgeVerdictSchema>;

export interface LlmJudgeSettings {
  /** Any chat model: an `@agentflow/llm` back end, or anything implementing `LanguageModel`. */
  model: LanguageModel;
  /** Sampling temperature (default 0: the verdict should not vary). */
  temperature?: number;
  maxTokens?: number;
}

export type JudgeResult =
  | {
      status: 'ok';
      verdict: JudgeVerdict;
      /** Keys of the reply that the schema does not name, dropped (dotted paths); absent when there were none. */
      droppedKeys?: string[];
    }
  | { status: 'failed'; reason: string };

export interface LlmJudge {
  judge(question: string, reference: string, response: string, signal?: AbortSignal): Promise<JudgeResult>;
}

const SYSTEM_PROMPT = [
  'You grade answers. Given a question, the correct answer and a response, decide whether the',
  "response's final answer is equivalent to the correct answer. Ignore formatting, units written",
  'differently and equivalent forms (0.5 and 1/2). Reasoning quality does not matter, only the final answer.',
  'Reply with JSON only: {"analysis": string, "correct": boolean}.',
].join(' ');

/** The last JSON object in a text, for models that wrap JSON in prose or code fences. */
export function lastJsonObject(fullText: string): unknown {
  // Bounded: a hostile reply full of braces must not cost quadratic parsing.
  const text = fullText.slice(-4000);
  let attempts = 0;
  // lastIndexOf with a negative start searches from 0 again, hence the explicit `> 0` guards.
  for (let end = text.lastIndexOf('}'); end >= 0 && attempts < 400; end = end > 0 ? text.lastIndexOf('}', end - 1) : -1) {
    for (let start = text.lastIndexOf('{', end); start >= 0 && attempts++ < 400; start = start > 0 ? text.lastIndexOf('{', start - 1) : -1) {
      try {
        return JSON.parse(text.slice(start, end + 1));
      } catch {
        // Keep widening.
      }
    }
  }
  return undefined;
}

/**
 * An LLM judge for answers no rule can check (free-form QA), in the spirit of AgentFlow's
 * own scoring: the model compares response and reference and returns
 * `{analysis, correct}` under a closed JSON schema. The last JSON object of the reply is
 * validated by core's `parseModelReply`: extra keys (a `confidence`) are dropped, a missing
 * or ill-typed `correct` fails. Failures (network, malformed output) come back
 * as `{status: 'failed'}`, never as an exception or a silent "wrong".
 */
export function createLlmJudge(settings: LlmJudgeSettings): LlmJudge {
  const { model, temperature = 0, maxTokens = 512 } = settings;
  const jsonSchema = z.toJSONSchema(judgeVerdictSchema) as Record<string, unknown>;
  return {
    async judge(question, reference, response, signal) {
      let text: string;
      try {
        const reply = await model.chat({
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: `Question:\n${question}\n\nCorrect answer:\n${reference}\n\nResponse:\n${response}` },
          ],
          jsonSchema,
          temperature,
          maxTokens,
          ...(signal ? { signal } : {}),
        });
        text = reply.text;
      } catch (cause) {
        return { status: 'failed', reason: `judge ${model.provider}:${model.modelId} failed: ${(cause as Error).message}` };
      }
      const parsed = parseModelReply(judgeVerdictSchema, lastJsonObject(text));
      if (!parsed.ok) {
        return { status: 'failed', reason: `judge output is not {analysis, correct} (${parsed.error}): ${JSON.stringify(text.slice(0, 200))}` };
      }
      return { status: 'ok', verdict: parsed.value, ...(parsed.droppedKeys.length > 0 ? { droppedKeys: parsed.droppedKeys } : {}) };
    },
  };
}
