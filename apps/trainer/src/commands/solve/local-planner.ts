import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, type LanguageModel } from '@agentflow/core';
import { createPolicyModel } from '@agentflow/llm';

export interface LocalPlannerModel {
  model: LanguageModel;
  release(): Promise<void>;
}

/**
 * The local ONNX policy of @agentflow/models in a Hugging Face style folder (config.json,
 * *.safetensors, tokenizer.json, tokenizer_config.json), with the PEFT adapter of the same
 * folder when there is one. Imported lazily so HTTP planners never load ONNX Runtime.
 */
export async function createLocalPlannerModel(dir: string): Promise<LocalPlannerModel> {
  if (!existsSync(join(dir, 'config.json'))) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--planner local:${dir}: ${join(dir, 'config.json')} is missing; expected a model folder (agentflow model init writes one).`,
      details: { dir },
    });
  }
  const models = await import('@agentflow/models');
  const weights = await models.loadModel(dir);
  // Qwen3 with thinking off, as the reference system runs its planner (templates without the variable ignore it).
  const tokenizer = await models.loadTokenizer(dir, { chatTemplateKwargs: { enable_thinking: false } });
  const adapter = existsSync(join(dir, 'adapter_config.json'))
    ? await models.loadLoraAdapter(dir, weights.config)
    : undefined;
  const policy = await models.createLocalPolicy({ model: weights, tokenizer, ...(adapter ? { adapter } : {}) });
  return {
    model: createPolicyModel({ policy, tokenizer, modelId: `local:${dir}`, maxTokens: 256 }),
    release: () => policy.release(),
  };
}
