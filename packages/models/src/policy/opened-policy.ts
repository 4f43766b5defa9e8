import type { ChatMessage } from '@agentflow/core';
import type { Device, TensorRuntime } from '@agentflow/tensor';
import type { PolicyObjectiveGraph } from '../graph/policy-training-graph';
import type { RowBlockSettings } from '../graph/row-blocked-layer';
import type { ChatTemplateKwargs, ModelTokenizer } from '../tokenizer/load-tokenizer';
import type { LocalPolicy } from './local-policy';
import type { PolicyDtype } from './policy-dtype';
import type { LoraTrainableSet, TrainableSet } from './trainable-set';

/** What every policy opened from a folder shares (see {@link LocalPolicySettings} for each). */
export interface PolicyOpenSettings {
  /** Seeds a fresh adapter's initialisation and sampling; default 0. */
  seed?: number;
  /** Default 'auto' (CUDA when its provider is installed, else the CPU). */
  device?: Device;
  /**
   * Element type of the base weights in memory (resolveWeightDtype): 'auto' (default; the folder's
   * own type on CUDA, float32 on the CPU and when the weights train in full), 'float32',
   * 'bfloat16' (CUDA only) or 'float16'.
   */
  dtype?: PolicyDtype;
  /** The ONNX Runtime to open sessions on (instead of one for `device`), e.g. shared by several policies. */
  runtime?: TensorRuntime;
  /** Recompute layer activations in the backward pass (less memory); default false. */
  recompute?: boolean;
  /** Run each layer's row-wise parts of the training step in blocks of rows (LocalPolicySettings.rowBlocks). */
  rowBlocks?: RowBlockSettings;
  /** Variables for the folder's chat template (e.g. `{ enable_thinking: false }`); default none. */
  chatTemplateKwargs?: ChatTemplateKwargs;
  /** The objectives the policy trains besides 'nll' (e.g. `clippedSurrogateObjective` of `@agentflow/dapo/graph`). */
  objectives?: readonly PolicyObjectiveGraph[];
}

/** A policy opened on a model folder, with the tokenizer its chats go through; `Trainable` says what trains. */
export interface OpenedPolicy<Trainable extends TrainableSet = TrainableSet> {
  /** The folder the policy was opened on: its adapter's base, or (full-parameter) the weights it started from. */
  modelDir: string;
  policy: LocalPolicy<Trainable>;
  /** The folder's tokenizer; chats render with its template and `chatTemplateKwargs`. */
  tokenizer: ModelTokenizer;
  /** Prompt and completion ids exactly as a chat call produces them: the chat template's prompt, the completion closed by EOS. */
  encodeExample(prompt: readonly ChatMessage[], completion: string): { promptIds: number[]; completionIds: number[] };
}

/** A LoRA policy opened on a model folder (see openLoraPolicy). */
export type OpenedLoraPolicy = OpenedPolicy<LoraTrainableSet>;

/** `policy` on `modelDir` with `tokenizer`'s chat encoding: the completion closed by the first EOS id. */
export function openedPolicy<Trainable extends TrainableSet>(modelDir: string, policy: LocalPolicy<Trainable>, tokenizer: ModelTokenizer): OpenedPolicy<Trainable> {
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
