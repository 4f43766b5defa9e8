import { existsSync, readdirSync } from 'node:fs';
import { createRandom, AgentFlowError } from '@agentflow/core';
import {
  createCausalLm,
  createLoraAdapter,
  createPolicyTrainer,
  createRandomModel,
  getModelPreset,
  LINEAR_MODULES,
  type LinearModule,
  loadLoraAdapter,
  loadModel,
  loraLayoutOf,
  nllObjective,
  peftKey,
  saveLoraAdapter,
  saveModelFolder,
} from '@agentflow/models';
import { createRuntime, type Device } from '@agentflow/tensor';
import { readCompletionFile } from './model-io';

/** `model init`: a random model folder for a preset. */
export async function initModel(settings: { preset: string; out: string; seed: number }): Promise<string> {
  if (existsSync(settings.out) && readdirSync(settings.out).length > 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--out ${settings.out} is not empty; choose a new folder.`,
      details: { out: settings.out },
    });
  }
  const config = getModelPreset(settings.preset);
  const model = createRandomModel(config, settings.seed);
  await saveModelFolder(settings.out, model);
  return `wrote ${settings.preset} model (${[...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0)} parameters) to ${settings.out}\n`;
}

/** `model init-adapter`: a PEFT adapter for a model folder; B is zero unless bStd > 0. */
export async function initAdapter(settings: {
  model: string;
  out: string;
  rank: number;
  alpha: number;
  targets: string;
  seed: number;
  bStd: number;
}): Promise<string> {
  const { config } = await loadModel(settings.model);
  const targetModules = settings.targets.split(',').map((name) => name.trim());
  for (const name of targetModules) {
    if (!(LINEAR_MODULES as readonly string[]).includes(name)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `--targets has ${JSON.stringify(name)}; expected names among ${LINEAR_MODULES.join(', ')}.`,
      });
    }
  }
  const adapter = createLoraAdapter(config, { rank: settings.rank, alpha: settings.alpha, targetModules: targetModules as LinearModule[] }, settings.seed);
  if (settings.bStd > 0) {
    const random = createRandom(settings.seed).fork('lora-b');
    for (const matrices of adapter.matrices.values()) {
      for (let index = 0; index < matrices.b.length; index++) matrices.b[index] = settings.bStd * random.normal();
    }
  }
  await saveLoraAdapter(settings.out, adapter, settings.model);
  return `wrote a rank-${settings.rank} adapter on ${targetModules.join(', ')} (${adapter.matrices.size} modules) to ${settings.out}\n`;
}

/** `model logprobs`: `{"logprobs": [[...]]}`, one number per completion token. */
export async function computeLogprobs(settings: { model: string; adapter?: string; input: string; device: Device; entropy: boolean }): Promise<string> {
  const batch = readCompletionFile(settings.input);
  const model = await loadModel(settings.model);
  const adapter = settings.adapter ? await loadLoraAdapter(settings.adapter, model.config) : undefined;
  const lm = await createCausalLm({ model, device: settings.device, ...(adapter ? { lora: adapter.config } : {}) });
  try {
    const scores = await lm.logprobs(batch, { entropy: settings.entropy, ...(adapter ? { adapter } : {}) });
    return `${JSON.stringify(settings.entropy ? scores : { logprobs: scores.logprobs })}\n`;
  } finally {
    await lm.release();
  }
}

/** `model grad`: mean NLL over every completion token and its gradients by PEFT key. */
export async function computeGradients(settings: { model: string; adapter: string; input: string; device: Device }): Promise<string> {
  const batch = readCompletionFile(settings.input);
  const model = await loadModel(settings.model);
  const adapter = await loadLoraAdapter(settings.adapter, model.config);
  const tokens = batch.completionIds.reduce((sum, row) => sum + row.length, 0);
  if (tokens === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `--input ${settings.input} has no completion tokens to take a loss over.` });
  }
  const trainer = createPolicyTrainer({
    model,
    lora: loraLayoutOf(model.config, adapter.config),
    runtime: createRuntime({ device: settings.device }),
    objectives: { nll: nllObjective },
  });
  try {
    const { stats, gradients } = await trainer.run(
      { ...batch, tokenWeights: batch.completionIds.map((row) => row.map(() => 1 / tokens)), objective: { kind: 'nll' } },
      adapter,
    );
    const grads: Record<string, number[]> = {};
    for (const path of adapter.matrices.keys()) {
      grads[peftKey(path, 'A')] = Array.from(gradients.get(`lora.${path}.A`)!);
      grads[peftKey(path, 'B')] = Array.from(gradients.get(`lora.${path}.B`)!);
    }
    return `${JSON.stringify({ loss: stats.loss, grads })}\n`;
  } finally {
    await trainer.release();
  }
}
