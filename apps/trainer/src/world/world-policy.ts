import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, LanguageModel } from '@agentflow/core';
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
  saveModelFolder,
  trainByteLevelBpe,
} from '@agentflow/models';
import type { RunConfig } from '../config/schema';

/** What the embedded default's policy is made of; recorded beside the model folder. */
export type WorldPolicyConfig = RunConfig['policy'];

/**
 * Creates the random planner of the embedded default in `dir`, once: byte-level BPE merges
 * learned from the demonstrations' prompts and completions (so names, numbers and JSON keys
 * are single tokens), a Qwen3 shape from the config, and an embedding table drawn wider than
 * HF's 0.02 (LoRA cannot train it, and a 0.02 table caps the logit range of a tiny tied head).
 */
export async function createWorldPolicyFolder(
  dir: string,
  samples: ReadonlyArray<{ prompt: ChatMessage[]; completion: string }>,
  config: WorldPolicyConfig,
  seed: number,
): Promise<void> {
  if (existsSync(join(dir, 'config.json'))) return;
  const texts = samples.flatMap((sample) => [sample.prompt.map((message) => message.content).join('\n'), sample.completion]);
  const merges = trainByteLevelBpe(texts, { merges: config.shape.bpeMerges });
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
  const embedding = model.weights.get('model.embed_tokens.weight');
  if (embedding) {
    const scale = shape.embeddingStd / model.config.initializerRange;
    for (let i = 0; i < embedding.data.length; i++) embedding.data[i] = (embedding.data[i] as number) * scale;
  }
  mkdirSync(dir, { recursive: true });
  await saveModelFolder(dir, model, { tokenizer: createByteLevelTokenizerFiles({ merges }) });
  writeFileSync(join(dir, 'agentflow-policy.json'), `${JSON.stringify({ seed, ...config.shape }, null, 2)}\n`);
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
