import { DEFAULT_PREFILL_CHUNK_TOKENS } from './generate';
import type { PlannedSession } from './memory-plan';

/** What a trained policy's sessions run in one process, as {@link plannedPolicySessions} needs it. */
export interface PlannedPolicySettings {
  /** Tokens of the longest prompt. */
  promptTokens: number;
  /** Tokens of the longest completion (the generation limit). */
  completionTokens: number;
  /** Rows of one training micro-batch, each as long as the longest prompt and completion (the caller's micro-batching rule applied). */
  trainingRows: number;
  /** Rows `generate` samples together in this process; absent when rollouts are sampled elsewhere (a vLLM server). */
  generationRows?: number;
  /** `generate`'s prefillChunkTokens; default {@link DEFAULT_PREFILL_CHUNK_TOKENS}, as `generate` itself. */
  prefillChunkTokens?: number;
  /** Layer activations recomputed in the training step's backward pass. */
  recompute: boolean;
  /** Name of the log-prob session in the printed plan; default 'log-probs'. */
  scoringName?: string;
}

/**
 * The sessions of a policy that samples, scores and trains in one process, at full length: one
 * inference session samples (when generationRows is set) and scores the completions of a
 * training micro-batch (old log-probs, a frozen reference), and one training session runs the
 * micro-batch's step, its LM head on the completion tokens only.
 */
export function plannedPolicySessions(settings: PlannedPolicySettings): PlannedSession[] {
  const sequence = settings.promptTokens + settings.completionTokens;
  const rows = settings.trainingRows;
  const generation: PlannedSession[] =
    settings.generationRows === undefined
      ? []
      : [{ kind: 'inference', name: 'generation', rows: settings.generationRows, sequence, scored: 0, chunk: settings.prefillChunkTokens ?? DEFAULT_PREFILL_CHUNK_TOKENS }];
  return [
    ...generation,
    { kind: 'inference', name: settings.scoringName ?? 'log-probs', rows, sequence, scored: settings.completionTokens },
    { kind: 'training', name: 'training step', tokens: rows * sequence, rows, completionTokens: rows * settings.completionTokens, recompute: settings.recompute },
  ];
}
