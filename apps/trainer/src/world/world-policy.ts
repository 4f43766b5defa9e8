import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChatMessage, createRandom, type LanguageModel } from '@agentflow/core';
import { clippedSurrogateObjective } from '@agentflow/dapo';
import { TASK_WORLD_ATTRIBUTES } from '@agentflow/eval';
import { createPolicyModel } from '@agentflow/llm';
import {
  byteLevelVocabSize,
  createByteLevelTokenizerFiles,
  createLocalPolicy,
  createRandomModel,
  getModelPreset,
  type LocalPolicy,
  loadLoraAdapter,
  loadModel,
  loadTokenizer,
  mergeLoraAdapter,
  type ModelTokenizer,
  type Qwen3Model,
  saveModelFolder,
  trainByteLevelBpe,
} from '@agentflow/models';
import { POLICY_CHECKPOINTS, type WorldContext, warmPlannerDir } from './world-context';
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
  // The texts as the chat template frames them (its special tokens cut the rest apart), so the
  // role headers are merged too: a byte-split "assistant" put nine junk tokens before every completion.
  const texts = samples.flatMap((sample) => [
    ...sample.prompt.map((message) => `${message.role}\n${message.content}`),
    'assistant\n',
    sample.completion,
  ]);
  // Names, numbers and the counted things are whole tokens everywhere (question, tool output,
  // thought, code), so a small model can learn to copy them by matching equal tokens; BPE
  // learns the JSON and template pieces in between.
  const merges = trainByteLevelBpe(texts, {
    merges: config.shape.bpeMerges,
    wholeWords: new RegExp(`[A-Z][a-z]+|\\d+|\\b(?:${TASK_WORLD_ATTRIBUTES.join('|')})\\b`),
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
      ropeTheta: shape.ropeTheta,
    },
    seed,
  );
  const tokenizer = createByteLevelTokenizerFiles({ merges });
  const vocab = (tokenizer.tokenizerJson.model as { vocab: Record<string, number> }).vocab;
  shapeRandomPlanner(model, shape, seed, wordClasses(vocab));
  mkdirSync(dir, { recursive: true });
  await saveModelFolder(dir, model, { tokenizer });
  writeFileSync(join(dir, 'agentflow-policy.json'), `${JSON.stringify({ seed, ...config.shape }, null, 2)}\n`);
}

/** The word classes of the world's whole-word tokens: names, numbers, the counted things. */
const WORD_CLASSES: ReadonlyArray<RegExp> = [/^[A-Z][a-z]+$/, /^\d+$/, new RegExp(`^(?:${TASK_WORLD_ATTRIBUTES.join('|')})$`)];

/** Token ids of each word class in `vocab` (byte-level: ASCII letters and digits spell themselves). */
function wordClasses(vocab: Record<string, number>): number[][] {
  return WORD_CLASSES.map((pattern) => Object.entries(vocab).flatMap(([token, id]) => (pattern.test(token) ? [id] : [])));
}

/**
 * Makes a random Qwen3 learnable by LoRA alone: a wide embedding table plus one shared
 * direction (so attention can key on position), one direction per word class shared by its
 * tokens (names, numbers, counted things: what pretraining would have grouped, so a head
 * can look for "the name" or "a number" before LoRA has learned each one), q_norm / k_norm
 * gains that let attention be sharp, and v_proj / o_proj that start near the identity (so a
 * head passes the token it attends to on: copying).
 */
function shapeRandomPlanner(model: Qwen3Model, shape: WorldPolicyConfig['shape'], seed: number, classes: readonly number[][]): void {
  const hidden = model.config.hiddenSize;
  const embedding = model.weights.get('model.embed_tokens.weight');
  if (embedding) {
    const scale = shape.embeddingStd / model.config.initializerRange;
    const random = createRandom(seed).fork('shared-direction');
    const unit = () => {
      const direction = Array.from({ length: hidden }, () => random.normal());
      const norm = Math.hypot(...direction);
      return direction.map((value) => value / norm);
    };
    const shared = unit().map((value) => value * shape.sharedDirection * shape.embeddingStd * Math.sqrt(hidden));
    const rows = embedding.data.length / hidden;
    const offsets = Array.from({ length: rows }, () => shared.slice());
    for (const ids of classes) {
      const direction = unit().map((value) => value * shape.wordClassDirection * shape.embeddingStd * Math.sqrt(hidden));
      for (const id of ids) for (let j = 0; j < hidden; j++) offsets[id]![j]! += direction[j]!;
    }
    for (let row = 0; row < rows; row++) {
      for (let j = 0; j < hidden; j++) {
        const index = row * hidden + j;
        embedding.data[index] = (embedding.data[index] as number) * scale + (offsets[row]![j] as number);
      }
    }
  }
  for (let layer = 0; layer < model.config.numHiddenLayers; layer++) {
    for (const name of ['q_norm', 'k_norm']) {
      const weight = model.weights.get(`model.layers.${layer}.self_attn.${name}.weight`);
      if (weight) weight.data = weight.data.map(() => shape.qkNormGain);
    }
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

/**
 * Opens the policy of `dir` with a fresh LoRA adapter, or the adapter saved in `checkpoint`
 * (with its optimiser state unless `optimizerState` is false).
 */
export async function openWorldPolicy(
  dir: string,
  config: WorldPolicyConfig,
  settings: { seed: number; device: 'auto' | 'cuda' | 'cpu'; checkpoint?: string; optimizerState?: boolean },
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
  if (settings.checkpoint && existsSync(settings.checkpoint)) await policy.load(settings.checkpoint, { optimizerState: settings.optimizerState ?? true });
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

/**
 * Writes the planner with a trained adapter merged in as a plain model folder (same
 * tokenizer), once: the PRM's backbone. A PRM on the warm-started planner reads features
 * that already track names, counts and the results of earlier steps; on the random base
 * its head would read noise. Written beside and renamed into place, so a kill leaves no
 * half folder.
 */
export async function writeMergedPlannerFolder(policyDir: string, adapterDir: string, outDir: string): Promise<void> {
  if (existsSync(join(outDir, 'config.json'))) return;
  const model = await loadModel(policyDir);
  const adapter = await loadLoraAdapter(adapterDir, model.config);
  const partial = `${outDir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  await saveModelFolder(partial, { ...model, weights: mergeLoraAdapter(model.weights, adapter) }, { tokenizer: null });
  for (const file of ['tokenizer.json', 'tokenizer_config.json']) {
    if (existsSync(join(policyDir, file))) copyFileSync(join(policyDir, file), join(partial, file));
  }
  renameSync(partial, outDir);
}

/**
 * Opens the planner as a pipeline stage left it in checkpoint `name`: the warm start's
 * adapter on the base planner, or, when `train.lora` is set, DAPO's own adapter on the
 * warm planner with the warm adapter merged (written once, on first use). Without a saved
 * checkpoint (or with `checkpoint: null`) the adapter is fresh: DAPO's first step then
 * starts exactly at the warm policy. `checkpoint` overrides where the adapter is read from.
 */
export async function openPlannerCheckpoint(
  context: WorldContext,
  name: string,
  settings: { optimizerState?: boolean; checkpoint?: string | null } = {},
): Promise<WorldPolicy> {
  const { config, run } = context;
  const checkpoint = settings.checkpoint === undefined ? join(run.paths.checkpoints, name) : settings.checkpoint;
  const open = { seed: config.seed, device: config.device, optimizerState: settings.optimizerState ?? true, ...(checkpoint ? { checkpoint } : {}) };
  if (name === POLICY_CHECKPOINTS.warm || config.train.lora === null) return openWorldPolicy(context.policyDir, config.policy, open);
  const base = warmPlannerDir(context);
  await writeMergedPlannerFolder(context.policyDir, run.checkpoint(POLICY_CHECKPOINTS.warm), base);
  return openWorldPolicy(base, { ...config.policy, lora: config.train.lora }, open);
}

