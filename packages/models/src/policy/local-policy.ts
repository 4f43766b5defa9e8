import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  AgentFlowError,
  assertNever,
  createRandom,
  type OptimizerStepSettings,
  type PolicyTrainingStats,
  type Random,
  type TrainablePolicy,
} from '@agentflow/core';
import { type AdamWSettings, type AdamWState, adamWStep, createRuntime, type Device, loadAdamWState, saveAdamWState, type TensorRuntime } from '@agentflow/tensor';
import { createJsonSchemaConstraints, type TokenConstraint } from '../constrained/token-constraint';
import { type CausalLm, createCausalLm } from '../engine/causal-lm';
import { generate } from '../engine/generate';
import { createPolicyTrainer, type PolicyTrainer } from '../engine/training-step';
import { loraLayoutOf } from '../graph/lora-inputs';
import { nllObjective, type PolicyObjectiveGraph } from '../graph/policy-training-graph';
import type { RowBlockSettings } from '../graph/row-blocked-layer';
import { createLoraAdapter, type LoraAdapter, type LoraSettings, parseLoraSettings } from '../lora/lora-adapter';
import type { ModelTokenizer } from '../tokenizer/load-tokenizer';
import type { TokenizerSource } from '../weights/model-folder';
import type { DecoderModel } from '../weights/random-model';
import { createFullParameters } from './full-parameters';
import { createLoraParameters } from './lora-parameters';
import type { PolicyParameters } from './policy-parameters';
import { decaysWeight, type LoraTrainableSet, type TrainableSet, trainableWeightNames } from './trainable-set';

/** Settings for {@link createLocalPolicy}; `Trainable` is the kind of `trainable` (LoRA when left out). */
export interface LocalPolicySettings<Trainable extends TrainableSet = TrainableSet> {
  model: DecoderModel;
  /** Needed for text, stop strings and jsonSchema-constrained generation. */
  tokenizer?: ModelTokenizer;
  /**
   * What trains: `{ kind: 'lora' }` (default), a LoRA adapter over the frozen base weights, or
   * `{ kind: 'full', frozen?: patterns }`, the base weights themselves in place, except those the
   * patterns match (see FullTrainableSet for the pattern syntax). With `full`, `lora` and
   * `adapter` must be left out.
   */
  trainable?: Trainable;
  /** The trained adapter's shape; its matrices start as PEFT initialises them (B = 0). */
  lora?: LoraSettings;
  /** Start from this adapter instead (e.g. loaded with loadLoraAdapter). */
  adapter?: LoraAdapter;
  /**
   * The tokenizer files `save` writes beside full-parameter weights (saveModelFolder's
   * `tokenizer`: `{ copyFrom: modelDir }`, TokenizerFiles, or null); default null, none, so the
   * saved folder holds config, weights and optimiser state. Unused with LoRA.
   */
  savedTokenizer?: TokenizerSource;
  /** Seeds the adapter initialisation and sampling of requests without a seed; default 0. */
  seed?: number;
  /**
   * The objectives the policy may be trained with besides the built-in 'nll', each naming the
   * `PolicyObjective` kind it builds (e.g. `clippedSurrogateObjective` of `@agentflow/dapo/graph`).
   */
  objectives?: readonly PolicyObjectiveGraph[];
  /**
   * AdamW decoupled weight decay; default 0 (HF TrainingArguments' default for fine-tuning).
   * Norm weights and biases never decay (transformers' convention, see decaysWeight).
   */
  weightDecay?: number;
  /** Recompute layer activations in the backward pass (less memory, about one more forward); default false. */
  recompute?: boolean;
  /**
   * Run each layer's row-wise parts of the training step (norms, projections, MLP) in blocks of
   * `blockSize` rows, recomputed per block in the backward: a long row's activations no longer
   * grow a full layer at a time (docs/perf.md, "Row-blocked layers"). Same loss and gradients;
   * slower. Default off.
   */
  rowBlocks?: RowBlockSettings;
  runtime?: TensorRuntime;
  device?: Device;
  /** Default: the tokenizer's, else the config's EOS ids. */
  eosTokenIds?: number[];
}

/** The adapter a policy of `Trainable` holds: a LoRA adapter, or none when the base weights train. */
export type LocalPolicyAdapter<Trainable extends TrainableSet> = Trainable extends { kind: 'full' } ? undefined : LoraAdapter;

/** A TrainablePolicy that also exposes its model and what trains (LoRA unless `Trainable` says full). */
export interface LocalPolicy<Trainable extends TrainableSet = LoraTrainableSet> extends TrainablePolicy {
  /**
   * The trained LoRA adapter (its arrays are what the optimiser updates), or undefined when the
   * base weights train (`trainable: { kind: 'full' }`): then the model's own arrays are updated.
   */
  readonly adapter: LocalPolicyAdapter<Trainable>;
  readonly model: DecoderModel;
  /** What trains, as given (default `{ kind: 'lora' }`). */
  readonly trainable: Trainable;
  /** The base weights that train, by Hugging Face name (empty with LoRA). */
  readonly trainedWeights: readonly string[];
  /**
   * Log-probs under frozen parameters: a KL reference or an old policy. With LoRA, a copy of the
   * current adapter (or `adapter`, which must have this policy's layout) through this policy's own
   * inference session, without a second copy of the model. Full-parameter, a copy of every weight
   * as it is at this call (no `adapter`), served by an inference session of its own over the copy;
   * each call takes another copy and session, kept until the policy is released.
   */
  frozen(adapter?: LoraAdapter): Pick<TrainablePolicy, 'logprobs'>;
  release(): Promise<void>;
}

const OPTIMIZER_STATE = 'optimizer.json';
/** What AdamW.save writes into a folder (optimizer.json: the step and settings; optimizer.safetensors: the moments). */
const OPTIMIZER_FILES = [OPTIMIZER_STATE, 'optimizer.safetensors'] as const;
/**
 * Where a full checkpoint keeps the optimiser: a subfolder, so the model folder's top level holds
 * only what transformers and vLLM load (vLLM reads every top-level *.safetensors of a folder
 * without an index as weights). An adapter folder keeps it beside the adapter, as before.
 */
const FULL_OPTIMIZER_DIR = 'optimizer';

/**
 * The gradient sums after a first micro-batch: its own gradient arrays, which the training session
 * returned for this call alone, so no zeroed buffer is filled and added to (an array seen twice is
 * copied, so no sum aliases another). A parameter the step has no gradient for starts at zeros.
 */
function firstSums(parameters: Readonly<Record<string, Float32Array>>, step: ReadonlyMap<string, Float32Array>): Record<string, Float32Array> {
  const sums: Record<string, Float32Array> = {};
  const taken = new Set<ArrayBufferLike>();
  for (const [key, value] of Object.entries(parameters)) {
    const gradient = step.get(key);
    if (gradient === undefined) sums[key] = new Float32Array(value.length);
    else if (taken.has(gradient.buffer)) sums[key] = gradient.slice();
    else {
      taken.add(gradient.buffer);
      sums[key] = gradient;
    }
  }
  return sums;
}

/**
 * The planner as a local, trainable policy: a decoder model (Qwen2/Qwen2.5, Qwen3, Llama) with a LoRA adapter fed as graph
 * inputs, or with its base weights trained in place (`trainable: { kind: 'full' }`). One inference
 * session serves sampling and scoring at every step and one training session per objective serves
 * every micro-batch. Gradients accumulate in memory until applyGradients runs AdamW (from
 * @agentflow/tensor, moments in float32, global-norm clipping over everything that trains, no
 * weight decay on norms and biases) on the trained arrays, in place.
 *
 * Full-parameter: every session reads the model's arrays on every run (on CUDA through
 * `hostWeights`, a copy to the device per run), so an update is seen without rebuilding anything;
 * `save` writes a Hugging Face model folder (saveModelFolder) with the optimiser state beside it.
 */
export async function createLocalPolicy<Trainable extends TrainableSet = LoraTrainableSet>(
  settings: LocalPolicySettings<Trainable>,
): Promise<LocalPolicy<Trainable>> {
  const { model } = settings;
  const trainable: TrainableSet = settings.trainable ?? { kind: 'lora' };
  const full = trainable.kind === 'full';
  const runtime = settings.runtime ?? createRuntime({ device: settings.device ?? 'auto' });
  const seed = settings.seed ?? 0;
  const padTokenId = settings.tokenizer?.padTokenId ?? 0;
  const objectives = [nllObjective, ...(settings.objectives ?? [])];
  const recompute = settings.recompute ?? false;
  let lm: CausalLm;
  let trainer: PolicyTrainer;
  let trained: PolicyParameters;
  switch (trainable.kind) {
    case 'lora': {
      const adapter = settings.adapter ?? createLoraAdapter(model.config, settings.lora ?? {}, seed);
      const loraConfig = parseLoraSettings(adapter.config);
      lm = await createCausalLm({ model, runtime, lora: loraConfig, padTokenId });
      trainer = createPolicyTrainer({ model, lora: loraLayoutOf(model.config, loraConfig), runtime, objectives, padTokenId, recompute, ...(settings.rowBlocks ? { rowBlocks: settings.rowBlocks } : {}) });
      trained = createLoraParameters(model, lm, adapter);
      break;
    }
    case 'full': {
      if (settings.lora !== undefined || settings.adapter !== undefined) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `createLocalPolicy: trainable is { kind: 'full' } (the base weights train) but \`${settings.adapter !== undefined ? 'adapter' : 'lora'}\` is set; leave LoRA settings out, or train LoRA with { kind: 'lora' }.`,
        });
      }
      const weightNames = trainableWeightNames(model.weights.keys(), trainable.frozen ?? []);
      // hostWeights: the optimiser writes the model's arrays, which a CUDA session would not see otherwise.
      lm = await createCausalLm({ model, runtime, padTokenId, hostWeights: true });
      trainer = createPolicyTrainer({ model, weights: weightNames, runtime, objectives, padTokenId, recompute, hostWeights: true, ...(settings.rowBlocks ? { rowBlocks: settings.rowBlocks } : {}) });
      trained = createFullParameters({ model, runtime, weightNames, tokenizer: settings.savedTokenizer ?? null, padTokenId });
      break;
    }
    default:
      return assertNever(trainable);
  }
  const { adapter, parameters } = trained;
  const eosTokenIds = settings.eosTokenIds ?? settings.tokenizer?.eosTokenIds ?? model.config.eosTokenIds;
  const tokenizer = settings.tokenizer;
  const constraintFor: ((schema: Record<string, unknown>) => TokenConstraint) | undefined = tokenizer
    ? createJsonSchemaConstraints({ tokenBytes: tokenizer.tokenBytes(), eosTokenIds })
    : undefined;
  const random: Random = createRandom(seed).fork('sampling');
  // The gradient sums of the micro-batches since the last update, by optimiser name.
  let accumulated: Record<string, Float32Array> | undefined;
  // AdamW's moments, updated in place by every step (adamWStep): one set, never copied, which
  // matters when every weight trains (two float32 copies of the model).
  let optimizerState: AdamWState = { step: 0, moments: {} };
  const weightDecay = settings.weightDecay ?? 0;
  // What optimizer.json records beside the moments (each step's learning rate and clipping come with the step).
  const savedAdamW: AdamWSettings = { schedule: { kind: 'constant', learningRate: 0 }, weightDecay, decays: decaysWeight };

  const policy: LocalPolicy<TrainableSet> = {
    adapter,
    model,
    trainable,
    trainedWeights: trained.weightNames,
    generate: (requests) =>
      generate(lm, requests, {
        eosTokenIds,
        ...(tokenizer ? { tokenizer, padTokenId: tokenizer.padTokenId } : {}),
        ...(constraintFor ? { constraintFor } : {}),
        random,
        ...(adapter ? { adapter } : {}),
      }),
    async logprobs(batch) {
      return (await lm.logprobs(batch, adapter ? { adapter } : {})).logprobs;
    },
    frozen: (frozenAdapter) => trained.frozen(frozenAdapter),
    async accumulateGradients(batch): Promise<PolicyTrainingStats> {
      const { stats, gradients } = await trainer.run(batch, adapter);
      const step = trained.gradients(gradients);
      if (accumulated === undefined) {
        accumulated = firstSums(parameters, step);
        return stats;
      }
      for (const [key, gradient] of step) {
        const target = accumulated[key]!;
        for (let index = 0; index < gradient.length; index++) target[index]! += gradient[index]!;
      }
      return stats;
    },
    async applyGradients(step: OptimizerStepSettings) {
      if (!accumulated) {
        throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'applyGradients was called before any accumulateGradients.' });
      }
      const result = adamWStep(optimizerState, parameters, accumulated, {
        learningRate: step.learningRate,
        weightDecay,
        decays: decaysWeight,
        ...(step.maxGradNorm ? { maxGradNorm: step.maxGradNorm } : {}),
      });
      accumulated = undefined;
      return { gradNorm: result.gradNorm };
    },
    async save(dir) {
      mkdirSync(dir, { recursive: true });
      // The optimiser's files go in the same folder (a full checkpoint: its optimizer/ subfolder), written from the moments themselves.
      const companion = full
        ? {
            files: [FULL_OPTIMIZER_DIR],
            write: async (target: string) => {
              mkdirSync(join(target, FULL_OPTIMIZER_DIR), { recursive: true });
              await saveAdamWState(join(target, FULL_OPTIMIZER_DIR), optimizerState, savedAdamW);
            },
          }
        : { files: OPTIMIZER_FILES, write: (target: string) => saveAdamWState(target, optimizerState, savedAdamW) };
      await trained.save(dir, companion);
    },
    async load(dir, loadSettings = {}) {
      await trained.load(dir);
      optimizerState = { step: 0, moments: {} };
      const optimizerDir = full ? join(dir, FULL_OPTIMIZER_DIR) : dir;
      if (loadSettings.optimizerState !== false && existsSync(join(optimizerDir, OPTIMIZER_STATE))) optimizerState = await loadAdamWState(optimizerDir);
      accumulated = undefined;
    },
    async release() {
      await lm.release();
      await trainer.release();
      await trained.release();
    },
  };
  // The adapter's type follows `Trainable`: undefined exactly when it is { kind: 'full' }.
  return policy as LocalPolicy<Trainable>;
}
