import { type LanguageModel, parseModelReply } from '@agentflow/core';
import { z } from 'zod';
import { formatChoiceOptions } from './choice-options';
import { lastJsonObject } from './llm-judge';

// The scoring of AgentFlow's paper (lupantech/AgentFlow, MIT; test/calculate_score_unified.py):
// an LLM judge (GPT-4o there) asked through structured output, with that script's prompts, so
// that a score here is comparable with the paper's. Multiple choice (GPQA, MedQA) is judged in
// two stages, extract the option, then verify it; every other benchmark in one.

/** How the judge is asked: one verification, or the option extracted first, then verified. */
export type AgentFlowJudgeMode = 'direct' | 'extract-then-verify';

/** The system prompt of AgentFlow's OpenAI engine (agentflow/engine/openai.py), which the scoring script uses. */
const SYSTEM_PROMPT = 'You are a helpful, creative, and smart assistant.';

const directPrompt = (question: string, response: string, correctAnswer: string) => `
Given a multiple-choice Question, a Model Response, and its Correct Answer, determine whether the Model's prediction is correct.

The prediction is correct only if it **exactly matches** the correct choice letter (e.g., "A", "B", "C", or "D") after necessary normalization. Follow these instructions carefully:

1. If the Model Response is a number (e.g., "2", "3", etc.), map it to the corresponding option letter based on its order in the Question (e.g., 1 → A, 2 → B, etc.).
2. Ignore irrelevant text, explanations, or format differences. Extract the core predicted answer.
3. Compare the final normalized response with the Correct Answer letter.

Question: ${question}
Model response: ${response}
Correct answer: ${correctAnswer}

Response Format:
<analysis>: First extract the mathematical answers, then explain the comparison
<true_false>: Return "True" only for exact matches, otherwise "False"
        `;

const extractionPrompt = (question: string, response: string, choices: string) => `
You are an impartial judge tasked with extracting the final predicted answer from a model's response to a multiple-choice question.

## Question:
${question}

## Model Response:
${response}

## Answer Choices:
${choices}

## Instructions:
1. Carefully read the model's reasoning and identify the **final concluded answer**.
2. If the model refers to an option letter (A/B/C/D), extract that choice.
3. If the model gives a number (e.g., "Answer: 1"), map it to the corresponding option: 1→A, 2→B, etc.
4. If the model writes the actual content (e.g., "the answer is 0.9") and one of the options contains "0.9", return that full option string.
5. Ignore explanations, disclaimers ("I think", "maybe"), and intermediate steps.
6. Return only the best-matching complete option in the format "X. ...".

## Output Format:
<analysis>: Explain how you located the final answer and which option was selected.
<extracted_option>: One of the provided choices exactly as listed (e.g., "A. 0.9").

Make sure <extracted_option> is one of these:
${choices}
`;

const verificationPrompt = (correctAnswer: string, extractedOption: string) => `
Given the correct answer and the model's extracted prediction, determine if they match semantically.

Correct Answer: ${correctAnswer}
Extracted Option: ${extractedOption}

Instructions:
- Consider them matching if either the option letter or the key content matches.
- Allow small formatting differences (e.g., "0.90" vs "0.9").
- Do NOT consider it correct if the meaning is clearly different.

Response Format:
<analysis>: Briefly explain why it matches or does not match.
<true_false>: True if semantically correct, otherwise False.
`;

/** The verdict as the script's structured output asks for it (`AnswerVerification`). */
export const agentFlowVerificationSchema = z
  .object({
    analysis: z.string().describe('Why the response matches the correct answer or not.'),
    true_false: z.boolean().describe('True when the response is correct.'),
  })
  .strict();

/** The extraction of the two-stage judge (`AnswerExtraction`). */
export const agentFlowExtractionSchema = z
  .object({
    analysis: z.string().describe('How the final answer was located and which option was selected.'),
    extracted_option: z.string().describe('One of the choices exactly as listed, e.g. "A. 0.9".'),
  })
  .strict();

/** What the judge is shown of one run. */
export interface AgentFlowJudgeInput {
  question: string;
  /** The agent's answer; as in the script, the inside of its last `<answer>...</answer>` when it has one. */
  response: string;
  /** The reference as the file gives it (several accepted answers are shown as a list). */
  correctAnswer: string;
  /** Multiple choice: the options (with or without their letters); the judge then extracts, then verifies. */
  choices?: readonly string[];
}

export type AgentFlowJudgeResult =
  | {
      status: 'ok';
      mode: AgentFlowJudgeMode;
      correct: boolean;
      /** The judge's analysis (two stages: the verification's). */
      analysis: string;
      /** Two stages: the option the extraction settled on, after the script's matching to a listed option. */
      extractedOption?: string;
    }
  | { status: 'failed'; mode: AgentFlowJudgeMode; reason: string };

export interface AgentFlowJudge {
  judge(input: AgentFlowJudgeInput, signal?: AbortSignal): Promise<AgentFlowJudgeResult>;
}

export interface AgentFlowJudgeSettings {
  /** Any chat model (an `@agentflow/llm` back end); the paper used GPT-4o. */
  model: LanguageModel;
  /** Default 0, as the script's engine. */
  temperature?: number;
  /** Default 3000, as the script's engine. */
  maxTokens?: number;
}

/** `"True"` and `"False"` as booleans in `true_false`, as the script's pydantic model reads them. */
function withBooleanText(candidate: unknown): unknown {
  if (typeof candidate !== 'object' || candidate === null || !('true_false' in candidate)) return candidate;
  const value = (candidate as { true_false: unknown }).true_false;
  if (typeof value !== 'string' || !/^\s*(?:true|false)\s*$/i.test(value)) return candidate;
  return { ...candidate, true_false: value.trim().toLowerCase() === 'true' };
}

/** The inside of the last `<answer>...</answer>`, else the whole response, as the script reads it. */
export function judgedResponse(response: string): string {
  const tags = [...response.matchAll(/<answer>([\s\S]*?)<\/answer>/g)];
  const last = tags[tags.length - 1];
  return last ? (last[1] ?? '').trim() : response;
}

/**
 * The script's `find_most_similar_candidate`: the first option that contains the extracted text
 * (case folded), else the first option holding its first number, else the first option.
 */
export function nearestListedOption(extracted: string, options: readonly string[]): string {
  const wanted = extracted.toLowerCase().trim();
  const containing = options.find((option) => option.toLowerCase().includes(wanted));
  if (containing !== undefined) return containing;
  const number = /\d+\.?\d*/.exec(wanted)?.[0];
  const withNumber = number === undefined ? undefined : options.find((option) => option.includes(number));
  return withNumber ?? options[0] ?? extracted;
}

/**
 * The paper's judge over any `LanguageModel`: `direct` asks the script's verification prompt
 * once; with `choices`, the script's extraction prompt first (its option matched to a listed one
 * as the script matches it), then the verification of that option against the correct answer.
 * Replies are JSON objects as the script's structured output (`{analysis, true_false}`,
 * `{analysis, extracted_option}`), the last one of a reply read by core's `parseModelReply`.
 * Unlike the script, which falls back to string comparison when a reply cannot be read, a
 * failure comes back as `{status: 'failed', reason}`; an exception from the model is thrown on
 * (an endpoint that is gone is not a wrong answer).
 */
export function createAgentFlowJudge(settings: AgentFlowJudgeSettings): AgentFlowJudge {
  const { model, temperature = 0, maxTokens = 3000 } = settings;
  const ask = async <T>(prompt: string, schema: z.ZodType<T>, signal: AbortSignal | undefined): Promise<{ ok: true; value: T } | { ok: false; reason: string }> => {
    const reply = await model.chat({
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: prompt },
      ],
      jsonSchema: z.toJSONSchema(schema) as Record<string, unknown>,
      temperature,
      maxTokens,
      ...(signal ? { signal } : {}),
    });
    const parsed = parseModelReply(schema, withBooleanText(lastJsonObject(reply.text)));
    if (parsed.ok) return { ok: true, value: parsed.value };
    return { ok: false, reason: `the judge ${model.provider}:${model.modelId} answered ${JSON.stringify(reply.text.slice(0, 200))}, not the JSON asked for (${parsed.error})` };
  };
  return {
    async judge(input, signal) {
      const response = judgedResponse(input.response);
      if (!input.choices || input.choices.length === 0) {
        const verdict = await ask(directPrompt(input.question, response, input.correctAnswer), agentFlowVerificationSchema, signal);
        if (!verdict.ok) return { status: 'failed', mode: 'direct', reason: verdict.reason };
        return { status: 'ok', mode: 'direct', correct: verdict.value.true_false, analysis: verdict.value.analysis };
      }
      const options = formatChoiceOptions(input.choices);
      const extraction = await ask(extractionPrompt(input.question, response, options.join('\n')), agentFlowExtractionSchema, signal);
      if (!extraction.ok) return { status: 'failed', mode: 'extract-then-verify', reason: extraction.reason };
      const extractedOption = nearestListedOption(extraction.value.extracted_option.trim(), options);
      const verdict = await ask(verificationPrompt(input.correctAnswer, extractedOption), agentFlowVerificationSchema, signal);
      if (!verdict.ok) return { status: 'failed', mode: 'extract-then-verify', reason: verdict.reason };
      return { status: 'ok', mode: 'extract-then-verify', correct: verdict.value.true_false, analysis: verdict.value.analysis, extractedOption };
    },
  };
}
