import { AgentFlowError, type PolicyBatch } from '@agentflow/core';
import { createRuntime, type Device } from '@agentflow/tensor';
import { loraLayoutOf, peftGradients } from '../graph/lora-inputs';
import { nllObjective } from '../graph/policy-training-graph';
import { loadLoraAdapter } from '../lora/peft-format';
import { loadPolicyModel, type PolicyDtype } from '../policy/policy-dtype';
import { type CompletionScores, createCausalLm } from './causal-lm';
import { createPolicyTrainer } from './training-step';

/** Settings of {@link scoreCompletions}. */
export interface ScoreCompletionsSettings {
  /** The model folder. */
  modelDir: string;
  /** A PEFT LoRA adapter folder to score under; absent: the base model. */
  adapterDir?: string;
  /** Prompts and completions, one row each (token ids). */
  batch: PolicyBatch;
  /** Default 'auto'. */
  device?: Device;
  /** Element type of the base weights (resolveWeightDtype); default 'float32', the folder's values exactly, for comparisons. */
  dtype?: PolicyDtype;
  /** Also return per-token entropies. Default false. */
  entropy?: boolean;
}

/**
 * Log-probs (and entropies) of each completion token given its prompt, from folders, as
 * `agentflow model logprobs` prints them for comparison with other frameworks.
 */
export async function scoreCompletions(settings: ScoreCompletionsSettings): Promise<CompletionScores> {
  const model = await loadPolicyModel(settings.modelDir, { dtype: settings.dtype ?? 'float32', device: settings.device ?? 'auto' });
  const adapter = settings.adapterDir ? await loadLoraAdapter(settings.adapterDir, model.config) : undefined;
  const lm = await createCausalLm({ model, device: settings.device ?? 'auto', ...(adapter ? { lora: adapter.config } : {}) });
  try {
    return await lm.logprobs(settings.batch, { entropy: settings.entropy ?? false, ...(adapter ? { adapter } : {}) });
  } finally {
    await lm.release();
  }
}

/** Settings of {@link completionNllGradients}. */
export interface CompletionNllGradientsSettings {
  modelDir: string;
  /** The PEFT LoRA adapter folder whose matrices are differentiated. */
  adapterDir: string;
  batch: PolicyBatch;
  /** Default 'auto'. */
  device?: Device;
  /** Element type of the base weights (resolveWeightDtype); default 'float32'. */
  dtype?: PolicyDtype;
  /** What the batch is, in the error when it has no completion token (a CLI: `--input FILE`). Default `The batch`. */
  batchName?: string;
}

/** The loss and its gradients of {@link completionNllGradients}. */
export interface CompletionNllGradients {
  /** Mean negative log-likelihood over every completion token of the batch. */
  loss: number;
  /** Gradient of `loss` by PEFT key (`base_model.model.{path}.lora_A.weight`), in the adapter's module order. */
  gradients: Map<string, Float32Array>;
}

/**
 * The mean NLL over every completion token (each weighted 1/tokens) and its LoRA gradients by
 * PEFT key, from folders, as `agentflow model grad` prints them for comparison with PEFT. A batch
 * without completion tokens is an INVALID_ARGUMENT error.
 */
export async function completionNllGradients(settings: CompletionNllGradientsSettings): Promise<CompletionNllGradients> {
  const { batch } = settings;
  const model = await loadPolicyModel(settings.modelDir, { dtype: settings.dtype ?? 'float32', device: settings.device ?? 'auto' });
  const adapter = await loadLoraAdapter(settings.adapterDir, model.config);
  const tokens = batch.completionIds.reduce((sum, row) => sum + row.length, 0);
  if (tokens === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `${settings.batchName ?? 'The batch'} has no completion tokens to take a loss over.` });
  }
  const trainer = createPolicyTrainer({
    model,
    lora: loraLayoutOf(model.config, adapter.config),
    runtime: createRuntime({ device: settings.device ?? 'auto' }),
    objectives: [nllObjective],
  });
  try {
    const { stats, gradients } = await trainer.run(
      { ...batch, tokenWeights: batch.completionIds.map((row) => row.map(() => 1 / tokens)), objective: { kind: 'nll' } },
      adapter,
    );
    return { loss: stats.loss, gradients: peftGradients(adapter, gradients) };
  } finally {
    await trainer.release();
  }
}
