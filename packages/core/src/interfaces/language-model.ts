import type { ChatMessage } from '../schemas/chat';

/** One chat completion request. Every field but `messages` is optional. */
export interface ChatRequest {
  messages: ChatMessage[];
  /** JSON schema the output must follow (Ollama `format`, OpenAI `response_format`, grammar decoding). */
  jsonSchema?: Record<string, unknown>;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  seed?: number;
  stop?: string[];
  signal?: AbortSignal;
}

export interface ChatResponse {
  text: string;
  /** Why generation ended: a stop condition, the token limit. */
  finishReason: 'stop' | 'length';
  model: string;
  usage?: { promptTokens: number; completionTokens: number };
  /** Exact token ids, when the model runs locally. */
  promptTokenIds?: number[];
  completionTokenIds?: number[];
  /** Sampling log-probs of the completion tokens, when the model runs locally. */
  completionLogprobs?: number[];
  /**
   * The version of the policy that sampled the completion, when the back end serves
   * versions (a vLLM server's LoRA adapter name, one per training step).
   */
  policyVersion?: string;
}

/**
 * A chat model. Small and versioned on purpose: providers (Ollama, OpenAI-compatible,
 * local ONNX) implement this and nothing else.
 */
export interface LanguageModel {
  readonly specificationVersion: 'v1';
  /** Provider name, e.g. `ollama`, `openai`, `local`. */
  readonly provider: string;
  readonly modelId: string;
  chat(request: ChatRequest): Promise<ChatResponse>;
}
