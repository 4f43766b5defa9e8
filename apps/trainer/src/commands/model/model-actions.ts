import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRandom, AgentFlowError } from '@agentflow/core';
import {
  byteLevelVocabSize,
  createCausalLm,
  createLoraAdapter,
  createPolicyTrainer,
  createRandomModel,
  getModelPreset,
  LINEAR_MODULES,
  type LinearModule,
  loadLoraAdapter,
  loadModel,
  loadTokenizer,
  loraLayoutOf,
  type ModelTokenizer,
  nllObjective,
  peftGradients,
  saveLoraAdapter,
  saveModelFolder,
  type WeightDtype,
} from '@agentflow/models';
import { createRuntime, type Device } from '@agentflow/tensor';
import { readCompletionFile } from './model-io';

/** Settings of `model init`. */
export interface InitModelSettings {
  preset: string;
  out: string;
  seed: number;
  /** Element type of the saved weights (config.json's torch_dtype). */
  dtype: WeightDtype;
  /** Copy the tokenizer files of this folder instead of writing the byte-level tokenizer. */
  tokenizer?: string;
  /** Rows of the embedding; default the preset's. */
  vocabSize?: number;
}

/**
 * `model init`: a random model folder for a preset. With a copied tokenizer, the config's EOS is
 * the tokenizer's `eos_token` (e.g. Qwen3's <|im_end|>, 151645), and the vocabulary must hold
 * every id the tokenizer can produce.
 */
export async function initModel(settings: InitModelSettings): Promise<string> {
  if (existsSync(settings.out) && readdirSync(settings.out).length > 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `--out ${settings.out} is not empty; choose a new folder.`,
      details: { out: settings.out },
    });
  }
  const preset = getModelPreset(settings.preset);
  const config = { ...preset, vocabSize: settings.vocabSize ?? preset.vocabSize };
  let tokenizerSize = byteLevelVocabSize();
  if (settings.tokenizer !== undefined) {
    const tokenizer = await loadTokenizer(settings.tokenizer);
    tokenizerSize = tokenizer.size;
    const eos = tokenizerEosId(settings.tokenizer, tokenizer);
    if (eos !== undefined) config.eosTokenIds = [eos];
    if (config.bosTokenId !== undefined && config.bosTokenId >= tokenizer.size) delete config.bosTokenId;
  }
  if (config.vocabSize < tokenizerSize) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The ${settings.tokenizer === undefined ? 'byte-level' : settings.tokenizer} tokenizer has ${tokenizerSize} ids, more than the vocabulary size ${config.vocabSize}; pass --vocab-size ${tokenizerSize} or more (Qwen3 checkpoints use 151936).`,
      details: { vocabSize: config.vocabSize, tokenizerSize },
    });
  }
  const model = createRandomModel(config, settings.seed);
  await saveModelFolder(settings.out, model, {
    dtype: settings.dtype,
    ...(settings.tokenizer === undefined ? {} : { tokenizer: { copyFrom: settings.tokenizer } }),
  });
  const parameters = [...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
  const tokenizer = settings.tokenizer === undefined ? 'byte-level tokenizer' : `tokenizer copied from ${settings.tokenizer}`;
  return `wrote ${settings.preset} model (${parameters} parameters, vocabulary ${config.vocabSize}, ${settings.dtype}, ${tokenizer}) to ${settings.out}\n`;
}

/** The id of tokenizer_config.json's `eos_token`, when it names one token. */
function tokenizerEosId(dir: string, tokenizer: ModelTokenizer): number | undefined {
  const tokenizerConfig = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as { eos_token?: string | { content?: string } | null };
  const eos = tokenizerConfig.eos_token;
  const text = typeof eos === 'string' ? eos : eos?.content;
  if (!text) return undefined;
  const ids = tokenizer.encode(text);
  return ids.length === 1 ? ids[0] : undefined;
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
    objectives: [nllObjective],
  });
  try {
    const { stats, gradients } = await trainer.run(
      { ...batch, tokenWeights: batch.completionIds.map((row) => row.map(() => 1 / tokens)), objective: { kind: 'nll' } },
      adapter,
    );
    const grads = Object.fromEntries([...peftGradients(adapter, gradients)].map(([key, gradient]) => [key, Array.from(gradient)]));
    return `${JSON.stringify({ loss: stats.loss, grads })}\n`;
  } finally {
    await trainer.release();
  }
}
