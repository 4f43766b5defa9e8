import { type ChatMessage, type ChatRequest, type ChatResponse, type LanguageModel, parseModelReply } from '@agentflow/core';
import { z } from 'zod';
import { extractLastJsonObject } from './extract-json';

/** Request settings of {@link generateObject}; everything but the messages and the schema. */
export interface GenerateObjectSettings extends Omit<ChatRequest, 'messages' | 'jsonSchema'> {
  /** Extra calls that feed the validation error back before degrading (default 2). */
  maxRepairs?: number;
  /**
   * JSON schema sent to the model; defaults to `z.toJSONSchema(schema)`, closed
   * (`additionalProperties: false`) when `schema` is `.strict()`. Validation still accepts
   * a reply with keys the schema does not name, dropped (core `parseModelReply`).
   */
  jsonSchema?: Record<string, unknown>;
}

/** One call of the model: the exact messages sent and what came back. */
export interface GenerationAttempt {
  messages: ChatMessage[];
  response: ChatResponse;
  /** Why this attempt's text was rejected; absent when it validated. */
  error?: string;
}

/** What {@link generateObject} returns: a typed value, or a typed failure to record. */
export type GenerateObjectResult<T> =
  | {
      ok: true;
      value: T;
      /** The attempt whose text produced the value. */
      attempt: GenerationAttempt;
      attempts: GenerationAttempt[];
      /** True when the value came from extracting JSON out of a reply that did not validate as a whole. */
      degraded: boolean;
      /**
       * Keys of `attempt`'s reply that the schema does not name, dropped before validation, as
       * dotted paths (`analysis`, `action_input.extra`); empty when the reply had none.
       */
      droppedKeys: string[];
    }
  | {
      ok: false;
      /** Why the last attempt failed, in `path: message` lines. */
      error: string;
      /** The text of the last reply. */
      rawText: string;
      attempts: GenerationAttempt[];
    };

type Validation<T> = { ok: true; value: T; droppedKeys: string[] } | { ok: false; error: string };

function validateText<T>(schema: z.ZodType<T>, text: string): Validation<T> {
  let candidate: unknown;
  try {
    candidate = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  return parseModelReply(schema, candidate);
}

/**
 * Asks `model` for JSON matching `schema`. A reply is validated by core's `parseModelReply`:
 * keys the schema does not name are dropped and reported (`droppedKeys`), so an extra key
 * costs no repair call; missing, ill-typed or out-of-range fields are invalid. Invalid
 * output is retried with the validation error fed back (`maxRepairs` times), then degraded
 * (the last JSON object found in any reply, newest first), then reported as `{ ok: false }`.
 * Malformed output never throws; transport errors (unreachable server, cancellation) do.
 */
export async function generateObject<T>(
  model: LanguageModel,
  schema: z.ZodType<T>,
  messages: ChatMessage[],
  settings: GenerateObjectSettings = {},
): Promise<GenerateObjectResult<T>> {
  const { maxRepairs = 2, jsonSchema, ...request } = settings;
  const schemaForModel = jsonSchema ?? (z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>);
  const attempts: GenerationAttempt[] = [];
  let conversation = [...messages];
  for (let call = 0; call <= maxRepairs; call++) {
    const response = await model.chat({ ...request, messages: conversation, jsonSchema: schemaForModel });
    const result = validateText(schema, response.text.trim());
    if (result.ok) {
      const attempt = { messages: conversation, response };
      attempts.push(attempt);
      return { ok: true, value: result.value, attempt, attempts, degraded: false, droppedKeys: result.droppedKeys };
    }
    attempts.push({ messages: conversation, response, error: result.error });
    conversation = [
      ...conversation,
      { role: 'assistant', content: response.text },
      {
        role: 'user',
        content: `That reply was rejected: ${result.error}. Reply again with exactly one JSON object that follows the schema, and nothing else.`,
      },
    ];
  }
  for (let k = attempts.length - 1; k >= 0; k--) {
    const attempt = attempts[k]!;
    const extracted = extractLastJsonObject(attempt.response.text);
    if (extracted === undefined) continue;
    const result = parseModelReply(schema, extracted);
    if (result.ok) return { ok: true, value: result.value, attempt, attempts, degraded: true, droppedKeys: result.droppedKeys };
  }
  const last = attempts[attempts.length - 1]!;
  return { ok: false, error: last.error ?? 'invalid output', rawText: last.response.text, attempts };
}
