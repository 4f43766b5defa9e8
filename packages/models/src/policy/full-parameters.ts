import { AgentFlowError, describeValue } from '@agentflow/core';
import type { TensorRuntime } from '@agentflow/tensor';
import { type CausalLm, createCausalLm } from '../engine/causal-lm';
import { loadModel, saveModelFolder, type TokenizerSource } from '../weights/model-folder';
import type { DecoderModel } from '../weights/random-model';
import { float32WeightData, type ModelWeights } from '../weights/weight-names';
import type { PolicyParameters } from './policy-parameters';

/** Settings for {@link createFullParameters}. */
export interface FullParametersSettings {
  model: DecoderModel;
  /** Opens the sessions of frozen copies. */
  runtime: TensorRuntime;
  /** The base weights that train, by Hugging Face name (the others stay as they are). */
  weightNames: readonly string[];
  /** The tokenizer `save` writes beside the weights (saveModelFolder's `tokenizer`). */
  tokenizer: TokenizerSource;
  padTokenId: number;
}

/** A copy of every weight of `weights`, as they are now. */
function copyWeights(weights: ModelWeights): ModelWeights {
  return new Map([...weights].map(([name, tensor]) => [name, { shape: [...tensor.shape], data: float32WeightData(name, tensor, 'Full-parameter training').slice() }]));
}

/**
 * The base weights as a policy trains them (full-parameter): the optimiser updates the model's
 * own arrays in place, which every session of the policy reads on its next run; saved as a
 * Hugging Face folder. A frozen copy gets an inference session of its own.
 */
export function createFullParameters(settings: FullParametersSettings): PolicyParameters {
  const { model } = settings;
  const parameters: Record<string, Float32Array> = {};
  for (const name of settings.weightNames) {
    const tensor = model.weights.get(name);
    if (!tensor) throw new AgentFlowError({ code: 'NOT_FOUND', message: `The model has no weight ${describeValue(name)}.`, details: { name } });
    parameters[name] = float32WeightData(name, tensor, 'Full-parameter training');
  }
  const frozenModels: Promise<CausalLm>[] = [];
  return {
    adapter: undefined,
    weightNames: [...settings.weightNames],
    parameters,
    gradients(step) {
      const byName = new Map<string, Float32Array>();
      for (const name of settings.weightNames) {
        const gradient = step.get(name);
        if (!gradient) {
          throw new AgentFlowError({
            code: 'NOT_FOUND',
            message: `No gradient for ${describeValue(name)}: the training step was built for other weights.`,
            details: { name },
          });
        }
        byName.set(name, gradient);
      }
      return byName;
    },
    frozen(adapter) {
      if (adapter !== undefined) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: 'frozen(adapter): this policy trains its base weights (trainable: full) and feeds no LoRA adapter; call frozen() for a copy of its weights.',
        });
      }
      // The copy is taken now; its session binds the copy (a device copy of it on CUDA is right:
      // nothing writes to it).
      const frozenModel: DecoderModel = { config: model.config, weights: copyWeights(model.weights) };
      const lm = createCausalLm({ model: frozenModel, runtime: settings.runtime, padTokenId: settings.padTokenId });
      lm.catch(() => undefined); // a failure surfaces on the first logprobs call
      frozenModels.push(lm);
      return { logprobs: async (batch) => (await (await lm).logprobs(batch)).logprobs };
    },
    async save(dir, alongside) {
      // One atomic folder: a kill leaves the previous checkpoint (weights and optimiser) or this one.
      await saveModelFolder(dir, model, { tokenizer: settings.tokenizer, alongside });
    },
    async load(dir) {
      const loaded = await loadModel(dir);
      const problems: string[] = [];
      for (const [name, tensor] of model.weights) {
        const source = loaded.weights.get(name);
        if (!source) problems.push(`${name} is missing`);
        else if (source.shape.join(',') !== tensor.shape.join(',')) problems.push(`${name} is [${source.shape}], not [${tensor.shape}]`);
      }
      for (const name of loaded.weights.keys()) if (!model.weights.has(name)) problems.push(`${name} is not a weight of this model`);
      if (problems.length > 0) {
        throw new AgentFlowError({
          code: 'SHAPE_MISMATCH',
          message: `The model folder ${dir} does not match this policy's model: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}.`,
          details: { dir, problems: problems.length },
        });
      }
      // In place: every session reads these very arrays.
      for (const [name, tensor] of model.weights) float32WeightData(name, tensor, 'Full-parameter training').set(float32WeightData(name, loaded.weights.get(name)!, 'Full-parameter training'));
    },
    async release() {
      for (const lm of frozenModels.splice(0)) {
        const opened = await lm.catch(() => undefined);
        await opened?.release();
      }
    },
  };
}
