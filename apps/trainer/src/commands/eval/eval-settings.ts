import { BENCHMARK_EVAL_DEFAULTS } from '@agentflow/eval';
import { z } from 'zod';

/** Defaults of `agentflow eval`, shown in its `--help`: the eval's own (@agentflow/eval), and where the models are. */
export const EVAL_DEFAULTS = {
  ...BENCHMARK_EVAL_DEFAULTS,
  ollamaUrl: 'http://127.0.0.1:11434',
  openaiBaseUrl: 'https://api.openai.com/v1',
  apiKeyEnv: 'OPENAI_API_KEY',
} as const;

/**
 * Where the models are and how hard to drive them: not part of the experiment, so a resume
 * may change them (a moved Ollama server, a key in another variable). Recorded as the
 * connection of eval-config.json.
 */
export const evalConnectionSchema = z
  .object({
    ollamaUrl: z.string().url().describe(`Ollama base URL (default ${EVAL_DEFAULTS.ollamaUrl}).`),
    openaiBaseUrl: z.string().url().describe(`OpenAI-compatible base URL, ending before /chat/completions (default ${EVAL_DEFAULTS.openaiBaseUrl}).`),
    apiKeyEnv: z.string().describe(`Environment variable with the OpenAI-compatible API key; "" sends none (vLLM). Default ${EVAL_DEFAULTS.apiKeyEnv}.`),
    responseFormat: z
      .enum(['json_schema', 'json_object', 'none'])
      .describe("How the OpenAI-compatible server is asked for JSON: json_schema (OpenAI, vLLM; the default), json_object (DeepSeek), none."),
    concurrency: z.number().int().positive().describe(`Runs in flight at once (default ${EVAL_DEFAULTS.concurrency}).`),
  })
  .strict();

export type EvalConnection = z.infer<typeof evalConnectionSchema>;
