import { AgentFlowError } from '@agentflow/core';
import type { CausalLm } from '../engine/causal-lm';
import { peftGradients } from '../graph/lora-inputs';
import type { LoraAdapter } from '../lora/lora-adapter';
import { loadLoraAdapter, peftKey, saveLoraAdapter } from '../lora/peft-format';
import type { DecoderModel } from '../weights/random-model';
import type { PolicyParameters } from './policy-parameters';

/** A LoRA adapter as a policy trains it: fed to `lm` on every call, saved in the PEFT layout. */
export function createLoraParameters(model: DecoderModel, lm: CausalLm, adapter: LoraAdapter): PolicyParameters {
  // Parameters by PEFT key, viewing the adapter's arrays: the optimiser updates them in place.
  const parameters: Record<string, Float32Array> = {};
  for (const [path, matrices] of adapter.matrices) {
    parameters[peftKey(path, 'A')] = matrices.a;
    parameters[peftKey(path, 'B')] = matrices.b;
  }
  return {
    adapter,
    weightNames: [],
    parameters,
    gradients: (step) => peftGradients(adapter, step),
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
    async save(dir, alongside) {
      await saveLoraAdapter(dir, adapter);
      await alongside.write(dir);
    },
    async load(dir) {
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
    },
    release: async () => undefined,
  };
}
