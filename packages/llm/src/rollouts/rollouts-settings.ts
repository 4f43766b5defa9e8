import { z } from 'zod';

/**
 * Where a trainer's rollouts are sampled (the trainer's `policy.rollouts`). `local` samples
 * in-process with the trained ONNX policy; `vllm` sends them to vLLM servers and hot-swaps the
 * LoRA adapter there after every update, while training stays on ONNX Runtime. Hand the parsed
 * value to createRolloutBackend.
 */
export const rolloutsSettingsSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('local').describe('In-process generation with the trained policy (the embedded default).') }).strict(),
    z
      .object({
        kind: z.literal('vllm'),
        urls: z
          .array(z.url())
          .min(1)
          .describe('vLLM servers (root URLs, e.g. http://gpu1:8000), each serving the planner\'s base model with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True; rollouts are spread over them.'),
        model: z
          .string()
          .min(1)
          .describe("The base model's served name (vllm serve --served-model-name). It must be the folder DAPO's adapter applies to: with train.lora set, the warm planner with its adapter merged (<run>/models/planner-warm)."),
        adapterPrefix: z
          .string()
          .regex(/^[A-Za-z0-9._-]+$/)
          .default('agentflow')
          .describe('Adapters are loaded as <adapterPrefix>-step<N> (N: optimiser steps taken); give each concurrent run its own prefix on shared servers.'),
        adapterDir: z
          .string()
          .min(1)
          .optional()
          .describe("Where each step's adapter is written for the servers to read (lora_path); default <run>/adapters. Servers on other machines need it on a shared file system."),
        guidedDecoding: z
          .enum(['structured_outputs', 'guided_json', 'none'])
          .default('structured_outputs')
          .describe("How the planner's JSON schema is sent: structured_outputs (vLLM >= 0.10.2), guided_json (older vLLM), none."),
        concurrency: z.number().int().positive().default(16).describe('Requests in flight per server.'),
        timeoutMs: z.number().int().positive().default(120_000).describe('Limit of one completion attempt.'),
        maxMeanLogprobGap: z
          .number()
          .positive()
          .nullable()
          .default(0.05)
          .describe(
            "Stop the run when a step's mean |server sampling log-prob - ONNX Runtime's recomputed old log-prob| over its tokens exceeds this (null: never). 0.05 nats: well above the float noise of one precision, well below what a wrong adapter, base model or tokenizer gives.",
          ),
        maxTokenLogprobGap: z
          .number()
          .positive()
          .nullable()
          .default(null)
          .describe("Stop the run when any one token's gap exceeds this (null: never; bf16 servers differ from float32 ONNX Runtime by more on rare tokens)."),
      })
      .strict()
      .describe('Rollouts on vLLM servers with LoRA hot-swap: prompts as token ids, completions as token ids with log-probs, token-exact trajectories.'),
  ])
  .prefault({ kind: 'local' });

/** Parsed rollouts settings (defaults filled in). */
export type RolloutsSettings = z.infer<typeof rolloutsSettingsSchema>;
