import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChatMessage, createRandom, type LanguageModel } from '@agentflow/core';
import { clippedSurrogateObjective } from '@agentflow/dapo';
import { createPolicyModel } from '@agentflow/llm';
import {
  byteLevelVocabSize,
  createByteLevelTokenizerFiles,
  createLocalPolicy,
  createRandomModel,
  getModelPreset,
  type LocalPolicy,
  loadModel,
  loadTokenizer,
  type ModelTokenizer,
  type Qwen3Model,
  saveModelFolder,
  trainByteLevelBpe,
} from '@agentflow/models';
import type { RunConfig } from '../config/schema';

/** What the embedded default's policy is made of; recorded beside the model folder. */
export type WorldPolicyConfig = RunConfig['policy'];

/**
 * Creates the random planner of the embedded default in `dir`, once: byte-level BPE merges
 * learned from the demonstrations' prompts and completions (names and numbers whole, JSON keys
 * merged), a Qwen3 shape from the config, and the initialisation of {@link shapeRandomPlanner}.
 */
export async function createWorldPolicyFolder(
  dir: string,
  samples: ReadonlyArray<{ prompt: ChatMessage[]; completion: string }>,
  config: WorldPolicyConfig,
  seed: number,
): Promise<void> {
  if (existsSync(join(dir, 'config.json'))) return;
  const texts = samples.flatMap((sample) => [sample.prompt.map((message) => message.content).join('\n'), sample.completion]);
  // Names and numbers are whole tokens everywhere (question, tool output, action), so a small
  // model can learn to copy them; BPE learns the JSON and template pieces in between.
  const merges = trainByteLevelBpe(texts, {
    merges: config.shape.bpeMerges,
    wholeWords: /[A-Z][a-z]+|\d+/,
    extraWords: Array.from({ length: 301 }, (_, n) => String(n)),
  });
  const { shape } = config;
  const model = createRandomModel(
    {
      ...getModelPreset('tiny'),
      vocabSize: byteLevelVocabSize(merges),
      hiddenSize: shape.hiddenSize,
      numHiddenLayers: shape.layers,
      intermediateSize: shape.intermediateSize,
      numAttentionHeads: shape.heads,
      numKeyValueHeads: shape.keyValueHeads,
      headDim: shape.hiddenSize / shape.heads,
    },
    seed,
  );
  shapeRandomPlanner(model, shape, seed);
  mkdirSync(dir, { recursive: true });
  await saveModelFolder(dir, model, { tokenizer: createByteLevelTokenizerFiles({ merges }) });
  writeFileSync(join(dir, 'agentflow-policy.json'), `${JSON.stringify({ seed, ...config.shape }, null, 2)}\n`);
}

/**
 * Makes a random Qwen3 learnable by LoRA alone: a wide embedding table plus one shared
 * direction (so attention can key on position), and v_proj / o_proj that start near the
 * identity (so a head passes the token it attends to on: copying).
 */
function shapeRandomPlanner(model: Qwen3Model, shape: WorldPolicyConfig['shape'], seed: number): void {
  const hidden = model.config.hiddenSize;
  const embedding = model.weights.get('model.embed_tokens.weight');
  if (embedding) {
    const scale = shape.embeddingStd / model.config.initializerRange;
    const random = createRandom(seed).fork('shared-direction');
    const direction = Array.from({ length: hidden }, () => random.normal());
    const norm = Math.hypot(...direction);
    const shared = (shape.sharedDirection * shape.embeddingStd * Math.sqrt(hidden)) / norm;
    for (let row = 0; row < embedding.data.length / hidden; row++) {
      for (let j = 0; j < hidden; j++) {
        const index = row * hidden + j;
        embedding.data[index] = (embedding.data[index] as number) * scale + shared * (direction[j] as number);
      }
    }
  }
  for (let layer = 0; layer < model.config.numHiddenLayers; layer++) {
    for (const name of ['v_proj', 'o_proj']) {
      const weight = model.weights.get(`model.layers.${layer}.self_attn.${name}.weight`);
      if (!weight) continue;
      const [rows, columns] = weight.shape as [number, number];
      for (let row = 0; row < rows; row++) {
        const index = row * columns + (row % columns);
        weight.data[index] = (weight.data[index] as number) + shape.identityInit;
      }
    }
  }
}

export interface WorldPolicy {
  policy: LocalPolicy;
  tokenizer: ModelTokenizer;
  /** The policy as a chat model for the planner: exact token ids and sampling log-probs. */
  languageModel: LanguageModel;
  /** Prompt and completion ids exactly as the planner's calls produce them. */
  encodeExample(prompt: readonly ChatMessage[], completion: string): { promptIds: number[]; completionIds: number[] };
}

/** Opens the policy of `dir` with a fresh LoRA adapter, or the adapter saved in `checkpoint`. */
export async function openWorldPolicy(
  dir: string,
  config: WorldPolicyConfig,
  settings: { seed: number; device: 'auto' | 'cuda' | 'cpu'; checkpoint?: string },
): Promise<WorldPolicy> {
  const model = await loadModel(dir);
  const tokenizer = await loadTokenizer(dir);
  const policy = await createLocalPolicy({
    model,
    tokenizer,
    lora: { rank: config.lora.rank, alpha: config.lora.alpha },
    seed: settings.seed,
    device: settings.device,
    objectives: { 'clipped-surrogate': clippedSurrogateObjective },
  });
  if (settings.checkpoint && existsSync(settings.checkpoint)) await policy.load(settings.checkpoint);
  const eos = tokenizer.eosTokenIds[0] as number;
  return {
    policy,
    tokenizer,
    languageModel: createPolicyModel({
      policy,
      tokenizer,
      modelId: `local:${dir}`,
      maxTokens: config.maxNewTokens,
      temperature: config.temperature,
      maxBatchSize: 16,
    }),
    encodeExample: (prompt, completion) => ({
      promptIds: tokenizer.encodeChat(prompt),
      completionIds: [...tokenizer.encode(completion), eos],
    }),
  };
}

/** Reads the small JSON state a stage keeps beside its checkpoint. */
export function readJsonIfExists<T>(path: string): T | undefined {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as T) : undefined;
}
