import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  AgentFlowError,
  createRandom,
  type OptimizerStepSettings,
  type PolicyTrainingStats,
  type Random,
  type TrainablePolicy,
} from '@agentflow/core';
import { type AdamWState, createAdamW, createRuntime, type Device, type TensorRuntime } from '@agentflow/tensor';
import { createJsonSchemaConstraints, type TokenConstraint } from '../constrained/token-constraint';
import { type CausalLm, createCausalLm } from '../engine/causal-lm';
import { generate } from '../engine/generate';
import { createPolicyTrainer, type PolicyTrainer } from '../engine/training-step';
import { loraLayoutOf, peftGradients } from '../graph/lora-inputs';
import { nllObjective, type PolicyObjectiveGraph } from '../graph/policy-training-graph';
import { createLoraAdapter, type LoraAdapter, type LoraSettings, parseLoraSettings } from '../lora/lora-adapter';
import { loadLoraAdapter, peftKey, saveLoraAdapter } from '../lora/peft-format';
import type { ModelTokenizer } from '../tokenizer/load-tokenizer';
import type { Qwen3Model } from '../weights/random-model';

/** Settings for {@link createLocalPolicy}. */
export interface LocalPolicySettings {
  model: Qwen3Model;
  /** Needed for text, stop strings and jsonSchema-constrained generation. */
  tokenizer?: ModelTokenizer;
  /** The trained adapter's shape; its matrices start as PEFT initialises them (B = 0). */
  lora?: LoraSettings;
  /** Start from this adapter instead (e.g. loaded with loadLoraAdapter). */
  adapter?: LoraAdapter;
  /** Seeds the adapter initialisation and sampling of requests without a seed; default 0. */
  seed?: number;
  /**
   * The objectives the policy may be trained with besides the built-in 'nll', each naming the
   * `PolicyObjective` kind it builds (e.g. `clippedSurrogateObjective` of `@agentflow/dapo/graph`).
   */
  objectives?: readonly PolicyObjectiveGraph[];
  /** AdamW decoupled weight decay; default 0 (HF TrainingArguments' default for fine-tuning). */
  weightDecay?: number;
  /** Recompute layer activations in the backward pass (less memory, about one more forward); default false. */
  recompute?: boolean;
  runtime?: TensorRuntime;
  device?: Device;
  /** Default: the tokenizer's, else the config's EOS ids. */
  eosTokenIds?: number[];
}

/** A TrainablePolicy that also exposes its adapter and model. */
export interface LocalPolicy extends TrainablePolicy {
  readonly adapter: LoraAdapter;
  readonly model: Qwen3Model;
  /**
   * Log-probs under a frozen adapter (a copy of the current one, or `adapter`, which must have
   * this policy's layout) through this policy's own inference session: a KL reference or an
   * old policy without a second copy of the model or another session.
   */
  frozen(adapter?: LoraAdapter): Pick<TrainablePolicy, 'logprobs'>;
  release(): Promise<void>;
}

const OPTIMIZER_STATE = 'optimizer.json';

/**
 * The planner as a local, trainable policy: a Qwen3 model with a LoRA adapter fed as graph inputs,
 * so one inference session serves sampling and scoring at every step and one training session per
 * objective serves every micro-batch. Gradients accumulate in memory until applyGradients runs
 * AdamW (from @agentflow/tensor) on the adapter.
 */
export async function createLocalPolicy(settings: LocalPolicySettings): Promise<LocalPolicy> {
  const { model } = settings;
  const runtime = settings.runtime ?? createRuntime({ device: settings.device ?? 'auto' });
  const seed = settings.seed ?? 0;
  const adapter = settings.adapter ?? createLoraAdapter(model.config, settings.lora ?? {}, seed);
  const loraConfig = parseLoraSettings(adapter.config);
  const layout = loraLayoutOf(model.config, loraConfig);
  const lm: CausalLm = await createCausalLm({ model, runtime, lora: loraConfig, padTokenId: settings.tokenizer?.padTokenId ?? 0 });
  const trainer: PolicyTrainer = createPolicyTrainer({
    model,
    lora: layout,
    runtime,
    objectives: [nllObjective, ...(settings.objectives ?? [])],
    padTokenId: settings.tokenizer?.padTokenId ?? 0,
    recompute: settings.recompute ?? false,
  });
  const eosTokenIds = settings.eosTokenIds ?? settings.tokenizer?.eosTokenIds ?? model.config.eosTokenIds;
  const tokenizer = settings.tokenizer;
  const constraintFor: ((schema: Record<string, unknown>) => TokenConstraint) | undefined = tokenizer
    ? createJsonSchemaConstraints({ tokenBytes: tokenizer.tokenBytes(), eosTokenIds })
    : undefined;
  const random: Random = createRandom(seed).fork('sampling');
  // Parameters by PEFT key, viewing the adapter's arrays: the optimiser updates them in place.
  const parameters: Record<string, Float32Array> = {};
  for (const [path, matrices] of adapter.matrices) {
    parameters[peftKey(path, 'A')] = matrices.a;
    parameters[peftKey(path, 'B')] = matrices.b;
  }
  let accumulated: Record<string, Float32Array> | undefined;
  let optimizerState: AdamWState = { step: 0, moments: {} };
  const weightDecay = settings.weightDecay ?? 0;

  return {
    adapter,
    model,
    generate: (requests) =>
      generate(lm, requests, {
        eosTokenIds,
        ...(tokenizer ? { tokenizer, padTokenId: tokenizer.padTokenId } : {}),
        ...(constraintFor ? { constraintFor } : {}),
        random,
        adapter,
      }),
    async logprobs(batch) {
      return (await lm.logprobs(batch, { adapter })).logprobs;
    },
    frozen(frozenAdapter) {
      const source = frozenAdapter ?? adapter;
      const sameLayout =
        source.config.rank === adapter.config.rank &&
        source.matrices.size === adapter.matrices.size &&
        [...adapter.matrices.keys()].every((path) => source.matrices.get(path)?.a.length === adapter.matrices.get(path)!.a.length);
      if (!sameLayout) {
        throw new AgentFlowError({
          code: 'SHAPE_MISMATCH',
          message: `frozen(): the adapter (rank ${source.config.rank}, ${source.matrices.size} modules) does not have this policy's layout (rank ${adapter.config.rank}, ${adapter.matrices.size} modules).`,
        });
      }
      const copy: LoraAdapter = {
        config: source.config,
        matrices: new Map([...source.matrices].map(([path, matrices]) => [path, { ...matrices, a: matrices.a.slice(), b: matrices.b.slice() }])),
      };
      return { logprobs: async (batch) => (await lm.logprobs(batch, { adapter: copy })).logprobs };
    },
    async accumulateGradients(batch): Promise<PolicyTrainingStats> {
      const { stats, gradients } = await trainer.run(batch, adapter);
      accumulated ??= Object.fromEntries(Object.entries(parameters).map(([key, value]) => [key, new Float32Array(value.length)]));
      for (const [key, gradient] of peftGradients(adapter, gradients)) {
        const target = accumulated[key]!;
        for (let index = 0; index < gradient.length; index++) target[index]! += gradient[index]!;
      }
      return stats;
    },
    async applyGradients(step: OptimizerStepSettings) {
      if (!accumulated) {
        throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'applyGradients was called before any accumulateGradients.' });
      }
      const optimizer = createAdamW({
        schedule: { kind: 'constant', learningRate: step.learningRate },
        weightDecay,
        ...(step.maxGradNorm ? { maxGradNorm: step.maxGradNorm } : {}),
      });
      optimizer.setState(optimizerState);
      const result = optimizer.step(parameters, accumulated);
      optimizerState = optimizer.getState();
      accumulated = undefined;
      return { gradNorm: result.gradNorm };
    },
    async save(dir) {
      mkdirSync(dir, { recursive: true });
      await saveLoraAdapter(dir, adapter);
      const optimizer = createAdamW({ schedule: { kind: 'constant', learningRate: 0 }, weightDecay });
      optimizer.setState(optimizerState);
      await optimizer.save(dir);
    },
    async load(dir, settings = {}) {
      const loaded = await loadLoraAdapter(dir, model.config);
      if (loaded.config.rank !== adapter.config.rank || loaded.matrices.size !== adapter.matrices.size || loaded.config.alpha !== adapter.config.alpha) {
        throw new AgentFlowError({
          code: 'SHAPE_MISMATCH',
          message: `The adapter in ${dir} (rank ${loaded.config.rank}, alpha ${loaded.config.alpha}, ${loaded.matrices.size} modules) does not match this policy's (rank ${adapter.config.rank}, alpha ${adapter.config.alpha}, ${adapter.matrices.size} modules).`,
        });
      }
      for (const [path, matrices] of loaded.matrices) {
        const target = adapter.matrices.get(path);
        if (!target) {
          throw new AgentFlowError({ code: 'SHAPE_MISMATCH', message: `The adapter in ${dir} has ${path}, which this policy does not train.` });
        }
        target.a.set(matrices.a);
        target.b.set(matrices.b);
      }
      optimizerState = { step: 0, moments: {} };
      if (settings.optimizerState !== false && existsSync(join(dir, OPTIMIZER_STATE))) {
        const optimizer = createAdamW({ schedule: { kind: 'constant', learningRate: 0 }, weightDecay });
        await optimizer.load(dir);
        optimizerState = optimizer.getState();
      }
      accumulated = undefined;
    },
    async release() {
      await lm.release();
      await trainer.release();
    },
  };
}
