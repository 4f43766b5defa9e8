import { AgentFlowError, type ChatRequest, type ChatResponse, assertNever } from '@agentflow/core';
import { z } from 'zod';
import type { ChatTokenizer } from '../policy/policy-model';
import { httpSettingsSchema } from '../transport/http-settings';
import type { JsonTransport } from '../transport/json-transport';
import { replyShapeError } from '../transport/reply-shape-error';
import { parseTokenIdString, vllmCompletionResponseSchema } from './vllm-wire';

/** What every vLLM back end shares: how a completion is asked for and checked. */
export const vllmRequestSettingsSchema = z
  .object({
    model: z
      .string()
      .min(1)
      .describe("The served base model's name (vllm serve's --served-model-name, default its model path); requests name a LoRA adapter instead once one is in use."),
    guidedDecoding: z
      .enum(['structured_outputs', 'guided_json', 'none'])
      .default('structured_outputs')
      .describe(
        "How a JSON schema is sent: structured_outputs: {json} (vLLM >= 0.10.2; the guided_* fields were removed in 0.12), guided_json (vLLM < 0.10.2), or none.",
      ),
    returnTokenIds: z
      .boolean()
      .default(true)
      .describe(
        'Send return_token_ids (vLLM >= 0.10.2) and check the prompt_token_ids and token_ids the server echoes against the ids sent and the logprobs tokens; older servers ignore the field (and log that they did).',
      ),
    maxTokens: z.number().int().positive().default(256).describe('max_tokens when a request sets none.'),
    temperature: z.number().nonnegative().default(1).describe('Temperature when a request sets none (1: on-policy sampling for RL).'),
  })
  .strict();

/** The request settings of a vLLM back end, parsed. */
export type VllmRequestSettings = z.output<typeof vllmRequestSettingsSchema>;

/** The HTTP settings of a vLLM back end: the shared ones, with the endpoints being the servers. */
export const vllmHttpSettingsSchema = httpSettingsSchema.omit({ endpoints: true });

/** Where one completion goes: the transport of the servers in rotation and the model (adapter) name to ask for. */
export interface VllmTarget {
  transport: JsonTransport;
  model: string;
  /** Recorded as the response's policyVersion (the adapter name), when an adapter is in use. */
  policyVersion?: string;
}

const sameIds = (left: readonly number[], right: readonly number[]) =>
  left.length === right.length && left.every((value, index) => value === right[index]);

function guidedFields(kind: VllmRequestSettings['guidedDecoding'], schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!schema) return {};
  switch (kind) {
    case 'structured_outputs':
      return { structured_outputs: { json: schema } };
    case 'guided_json':
      return { guided_json: schema };
    case 'none':
      return {};
    default:
      return assertNever(kind, 'guidedDecoding');
  }
}

/**
 * One chat call as a vLLM completion: the chat template applied here (`tokenizer.encodeChat`),
 * the prompt sent as token ids, the completion read back as token ids
 * (`return_tokens_as_token_ids`) with their sampling log-probs (`logprobs: 0`: the sampled token
 * only), so a trajectory holds exactly what was sampled.
 */
export async function vllmChat(
  target: VllmTarget,
  tokenizer: ChatTokenizer,
  settings: VllmRequestSettings,
  request: ChatRequest,
): Promise<ChatResponse> {
  const promptIds = tokenizer.encodeChat(request.messages);
  const body = {
    model: target.model,
    prompt: promptIds,
    max_tokens: request.maxTokens ?? settings.maxTokens,
    temperature: request.temperature ?? settings.temperature,
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(request.topP === undefined ? {} : { top_p: request.topP }),
    ...(request.stop && request.stop.length > 0 ? { stop: request.stop } : {}),
    logprobs: 0,
    return_tokens_as_token_ids: true,
    ...(settings.returnTokenIds ? { return_token_ids: true } : {}),
    ...guidedFields(settings.guidedDecoding, request.jsonSchema),
  };
  const reply = await target.transport.post('/v1/completions', body, { signal: request.signal });
  const parsed = vllmCompletionResponseSchema.safeParse(reply.body);
  if (!parsed.success) {
    throw replyShapeError(reply, {
      expected: 'a completion with at least one choice',
      error: parsed.error,
      advice: "Check the rollout back end's urls: each must be a vLLM server's root, whose /v1/completions answers with choices.",
    });
  }
  const choice = parsed.data.choices[0]!;
  const fail = (message: string): never => {
    throw new AgentFlowError({ code: 'SHAPE_MISMATCH', message: `POST ${reply.url}: ${message}`, details: { url: reply.url, model: target.model } });
  };
  if (!choice.logprobs) return fail('the completion has no logprobs although the request set logprobs: 0; is this a vLLM server?');
  const completionIds = choice.logprobs.tokens.map((token, index) => {
    const id = parseTokenIdString(token);
    return id ?? fail(`token ${index} is ${JSON.stringify(token)}, not "token_id:<id>"; the server ignored return_tokens_as_token_ids (vLLM >= 0.5.2 has it).`);
  });
  const logprobs = choice.logprobs.token_logprobs.map((value, index) =>
    value === null || !Number.isFinite(value) ? fail(`the log-prob of completion token ${index} is ${value}, not a finite number.`) : value,
  );
  if (logprobs.length !== completionIds.length) fail(`${completionIds.length} tokens came back with ${logprobs.length} log-probs.`);
  if (choice.token_ids && !sameIds(choice.token_ids, completionIds)) {
    fail(`token_ids [${choice.token_ids.slice(0, 8).join(', ')}...] differ from the logprobs tokens [${completionIds.slice(0, 8).join(', ')}...].`);
  }
  if (choice.prompt_token_ids && !sameIds(choice.prompt_token_ids, promptIds)) {
    const at = promptIds.findIndex((id, index) => choice.prompt_token_ids![index] !== id);
    fail(
      `the server's prompt_token_ids (${choice.prompt_token_ids.length} ids) differ from the ${promptIds.length} ids sent, first at position ${at < 0 ? promptIds.length : at}; the trajectory would not be token-exact.`,
    );
  }
  return {
    text: choice.text,
    finishReason: choice.finish_reason === 'length' ? 'length' : 'stop',
    model: parsed.data.model,
    usage: { promptTokens: promptIds.length, completionTokens: completionIds.length },
    promptTokenIds: promptIds,
    completionTokenIds: completionIds,
    completionLogprobs: logprobs,
    ...(target.policyVersion === undefined ? {} : { policyVersion: target.policyVersion }),
  };
}
