import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '@agentflow/core';
import type { Device, TensorRuntime } from '@agentflow/tensor';
import type { PolicyObjectiveGraph } from '../graph/policy-training-graph';
import type { LoraSettings } from '../lora/lora-adapter';
import { type ChatTemplateKwargs, loadTokenizer, type ModelTokenizer } from '../tokenizer/load-tokenizer';
import { loadModel } from '../weights/model-folder';
import { createLocalPolicy, type LocalPolicy } from './local-policy';

/** What every policy opened from a folder shares (see {@link LocalPolicySettings} for each). */
export interface LoraPolicyOpenSettings {
  /** Seeds a fresh adapter's initialisation and sampling; default 0. */
  seed?: number;
  /** Default 'auto' (CUDA when its provider is installed, else the CPU). */
  device?: Device;
  /** The ONNX Runtime to open sessions on (instead of one for `device`), e.g. shared by several policies. */
  runtime?: TensorRuntime;
  /** Recompute layer activations in the backward pass (less memory); default false. */
  recompute?: boolean;
  /** Variables for the folder's chat template (e.g. `{ enable_thinking: false }`); default none. */
  chatTemplateKwargs?: ChatTemplateKwargs;
  /** The objectives the policy trains besides 'nll' (e.g. `clippedSurrogateObjective` of `@agentflow/dapo/graph`). */
  objectives?: readonly PolicyObjectiveGraph[];
}

/** Settings for {@link openLoraPolicy}. */
export interface OpenLoraPolicySettings extends LoraPolicyOpenSettings {
  /** A Hugging Face model folder: config.json, safetensors weights, tokenizer files. */
  modelDir: string;
  /** The adapter's shape; a fresh adapter starts as PEFT initialises it (B = 0). */
  lora: LoraSettings;
  /**
   * A saved adapter to start from (a PEFT folder as `LocalPolicy.save` writes it). A folder
   * without `adapter_config.json` (a checkpoint not written yet) leaves the adapter fresh.
   */
  checkpoint?: string;
  /** Restore the checkpoint's optimiser state with it (default true: a resume); false starts AdamW afresh. */
  optimizerState?: boolean;
}

/** A LoRA policy opened on a model folder, with the tokenizer its chats go through. */
export interface OpenedLoraPolicy {
  /** The folder the policy's adapter applies to. */
  modelDir: string;
  policy: LocalPolicy;
  /** The folder's tokenizer; chats render with its template and `chatTemplateKwargs`. */
  tokenizer: ModelTokenizer;
  /** Prompt and completion ids exactly as a chat call produces them: the chat template's prompt, the completion closed by EOS. */
  encodeExample(prompt: readonly ChatMessage[], completion: string): { promptIds: number[]; completionIds: number[] };
}

/**
 * Opens the model folder `modelDir` as a trainable LoRA policy: a fresh adapter of shape
 * `lora`, or the one saved in `checkpoint` (with its optimiser state unless `optimizerState` is
 * false).
 */
export async function openLoraPolicy(settings: OpenLoraPolicySettings): Promise<OpenedLoraPolicy> {
  const { modelDir, checkpoint } = settings;
  const model = await loadModel(modelDir);
  const tokenizer = await loadTokenizer(modelDir, { chatTemplateKwargs: settings.chatTemplateKwargs });
  const policy = await createLocalPolicy({
    model,
    tokenizer,
    lora: settings.lora,
    seed: settings.seed,
    device: settings.device,
    runtime: settings.runtime,
    objectives: settings.objectives,
    recompute: settings.recompute,
  });
  if (checkpoint && existsSync(join(checkpoint, 'adapter_config.json'))) {
    await policy.load(checkpoint, { optimizerState: settings.optimizerState ?? true });
  }
  const eos = tokenizer.eosTokenIds[0] as number;
  return {
    modelDir,
    policy,
    tokenizer,
    encodeExample: (prompt, completion) => ({
      promptIds: tokenizer.encodeChat(prompt),
      completionIds: [...tokenizer.encode(completion), eos],
    }),
  };
}
