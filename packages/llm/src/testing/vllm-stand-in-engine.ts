import { importOptional, type PolicyGenerateRequest, type PolicyGeneration } from '@agentflow/core';
import type { CausalLm, createJsonSchemaConstraints, LoraAdapter, ModelTokenizer, Qwen3Model } from '@agentflow/models';
import type { TensorRuntime } from '@agentflow/tensor';

/**
 * What a vLLM stand-in samples with: the base model of a folder (read on first use, as vLLM
 * reads it at start) and the LoRA adapters loaded on top of it, each fed to one ONNX Runtime
 * session per adapter shape, as vLLM serves many adapters over one copy of the base weights.
 */
export interface StandInEngine {
  /** Reads a PEFT folder as an adapter of this base model (shapes checked). */
  readAdapter(path: string): Promise<LoraAdapter>;
  /** Samples each request with `adapter` (or the base model), batched. */
  generate(requests: PolicyGenerateRequest[], adapter: LoraAdapter | undefined): Promise<PolicyGeneration[]>;
  /** The base model's tokenizer (token text for replies without return_tokens_as_token_ids). */
  tokenizer(): Promise<ModelTokenizer>;
  release(): Promise<void>;
}

interface Loaded {
  models: typeof import('@agentflow/models');
  model: Qwen3Model;
  tokenizer: ModelTokenizer;
  runtime: TensorRuntime;
  constraintFor: ReturnType<typeof createJsonSchemaConstraints>;
}

const feature = 'startVllmStandIn';

/**
 * The engine over the model folder `modelDir`, on the CPU. `@agentflow/models` and
 * `@agentflow/tensor` are optional peers of this package, loaded on the first request.
 */
export function createStandInEngine(modelDir: string): StandInEngine {
  let loading: Promise<Loaded> | undefined;
  const sessions = new Map<string, Promise<CausalLm>>();
  const load = () => {
    loading ??= (async () => {
      const models = await importOptional(() => import('@agentflow/models'), { packageName: '@agentflow/models', feature });
      const { createRuntime } = await importOptional(() => import('@agentflow/tensor'), { packageName: '@agentflow/tensor', feature });
      const model = await models.loadModel(modelDir);
      // The chat template is the client's business: a completion request carries token ids.
      const tokenizer = await models.loadTokenizer(modelDir);
      const constraintFor = models.createJsonSchemaConstraints({ tokenBytes: tokenizer.tokenBytes(), eosTokenIds: tokenizer.eosTokenIds });
      return { models, model, tokenizer, runtime: createRuntime({ device: 'cpu' }), constraintFor };
    })();
    return loading;
  };
  const sessionFor = async (adapter: LoraAdapter | undefined): Promise<CausalLm> => {
    const { models, model, tokenizer, runtime } = await load();
    const key = adapter ? JSON.stringify(adapter.config) : 'base';
    let session = sessions.get(key);
    if (!session) {
      session = models.createCausalLm({ model, runtime, padTokenId: tokenizer.padTokenId, ...(adapter ? { lora: adapter.config } : {}) });
      sessions.set(key, session);
    }
    return session;
  };
  return {
    async readAdapter(path) {
      const { models, model } = await load();
      return models.loadLoraAdapter(path, model.config);
    },
    async generate(requests, adapter) {
      const { models, tokenizer, constraintFor } = await load();
      const lm = await sessionFor(adapter);
      return models.generate(lm, requests, {
        eosTokenIds: tokenizer.eosTokenIds,
        tokenizer,
        padTokenId: tokenizer.padTokenId,
        constraintFor,
        ...(adapter ? { adapter } : {}),
      });
    },
    async tokenizer() {
      return (await load()).tokenizer;
    },
    async release() {
      for (const session of sessions.values()) await (await session).release();
      sessions.clear();
    },
  };
}
