import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChatMessage, createRandom } from '@agentflow/core';
import {
  byteLevelVocabSize,
  createByteLevelTokenizerFiles,
  createRandomModel,
  getModelPreset,
  type Qwen3Config,
  type Qwen3Model,
  saveModelFolder,
  trainByteLevelBpe,
} from '@agentflow/models';
import { ATTRIBUTES as TASK_WORLD_ATTRIBUTES } from './templates';

/**
 * The shape and initialisation of the world's random planner. A random Qwen3 can only be
 * taught by LoRA what LoRA reaches (not the embeddings, the tied head or the norms), so it
 * is drawn for LoRA to learn the world: see the trainer README, "The embedded default's planner".
 */
export interface WorldPlannerShape {
  hiddenSize: number;
  layers: number;
  heads: number;
  keyValueHeads: number;
  intermediateSize: number;
  /** Std of the random embedding table (HF draws 0.02; LoRA cannot train it). */
  embeddingStd: number;
  /** One fixed random direction added to every embedding, relative to the token part: gives q and k a constant to attend by position. */
  sharedDirection: number;
  /** One direction per word class (names, numbers, counted things) added to its tokens, relative to the token part. */
  wordClassDirection: number;
  /** Added to the diagonal of v_proj and o_proj: a base that passes tokens on (copying). */
  identityInit: number;
  ropeTheta: number;
  /** Initial weight of q_norm and k_norm: at 1 an attention logit is at most sqrt(head_dim), too flat to copy one token. */
  qkNormGain: number;
  /** BPE merges learned between the whole-word tokens (names, numbers, counted things). */
  bpeMerges: number;
}

/** One decision of a demonstration as the planner sees and writes it: its prompt messages and the completion. */
export interface WorldPlannerSample {
  prompt: readonly ChatMessage[];
  completion: string;
}

/**
 * Names, numbers and the counted things are whole tokens everywhere (question, tool output,
 * thought, code), so a small model can learn to copy them by matching equal tokens; BPE learns
 * the JSON and template pieces in between. Every number up to 300 is made whole even if the texts
 * lack it.
 */
const WHOLE_WORDS = new RegExp(`[A-Z][a-z]+|\\d+|\\b(?:${TASK_WORLD_ATTRIBUTES.join('|')})\\b`);
const EXTRA_WORDS: readonly string[] = Array.from({ length: 301 }, (_, n) => String(n));

/**
 * The Qwen3 config of the world's planner: the `tiny` preset's norms, head tying, special ids and
 * initialisation range at the shape's widths, with a vocabulary of `vocabSize` ids (the learned
 * tokenizer's, or {@link worldPlannerVocabCeiling} before it exists).
 */
export function worldPlannerConfig(shape: WorldPlannerShape, vocabSize: number): Qwen3Config {
  return {
    ...getModelPreset('tiny'),
    vocabSize,
    hiddenSize: shape.hiddenSize,
    numHiddenLayers: shape.layers,
    intermediateSize: shape.intermediateSize,
    numAttentionHeads: shape.heads,
    numKeyValueHeads: shape.keyValueHeads,
    headDim: shape.hiddenSize / shape.heads,
    ropeTheta: shape.ropeTheta,
  };
}

/** Tokens a generated name adds at most: names are 4-5 letters (generateNames), one merge per letter joined. */
const NAME_TOKENS = 4;
/**
 * Tokens allowed for every other whole word of the demonstrations: the capitalised words of the
 * questions and of the planner's prompt, and numbers above 300. With the compact prompt at the
 * defaults there are 9 (How, What, Tools) and no number above 81; a prompt with more capitalised
 * words or raw search scores can pass it.
 */
const OTHER_WORD_TOKENS = 256;

/**
 * A ceiling of the vocabulary {@link createWorldPlannerFolder} learns, for what must be sized
 * before the demonstrations exist (a memory plan): the byte-level base with the merges of the
 * words made whole whatever the texts (every number up to 300, the counted things), computed by
 * the builder's own rule, plus one token per BPE merge (`bpeMerges`), {@link NAME_TOKENS} per
 * entity name and {@link OTHER_WORD_TOKENS}. At the defaults (24 entities, 300 merges): 1,211
 * where the learned vocabulary has 815.
 */
export function worldPlannerVocabCeiling(world: { planner: Pick<WorldPlannerShape, 'bpeMerges'>; entities: number }): number {
  const fixed = trainByteLevelBpe([], { merges: 0, wholeWords: WHOLE_WORDS, extraWords: [...EXTRA_WORDS, ...TASK_WORLD_ATTRIBUTES] });
  return byteLevelVocabSize(fixed) + world.planner.bpeMerges + NAME_TOKENS * world.entities + OTHER_WORD_TOKENS;
}

/**
 * Creates the random planner of the embedded default in `dir`, once: byte-level BPE merges
 * learned from the demonstrations' prompts and completions (names and numbers whole, JSON keys
 * merged), a Qwen3 shape, and the initialisation of {@link shapeRandomPlanner}. Writes
 * `agentflow-policy.json` (the seed and shape) beside the model.
 */
export async function createWorldPlannerFolder(
  dir: string,
  samples: readonly WorldPlannerSample[],
  shape: WorldPlannerShape,
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
  const merges = trainByteLevelBpe(texts, { merges: shape.bpeMerges, wholeWords: WHOLE_WORDS, extraWords: EXTRA_WORDS });
  const model = createRandomModel(worldPlannerConfig(shape, byteLevelVocabSize(merges)), seed);
  const tokenizer = createByteLevelTokenizerFiles({ merges });
  const vocab = (tokenizer.tokenizerJson.model as { vocab: Record<string, number> }).vocab;
  shapeRandomPlanner(model, shape, seed, wordClasses(vocab));
  mkdirSync(dir, { recursive: true });
  await saveModelFolder(dir, model, { tokenizer });
  writeFileSync(join(dir, 'agentflow-policy.json'), `${JSON.stringify({ seed, ...shape }, null, 2)}\n`);
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
function shapeRandomPlanner(model: Qwen3Model, shape: WorldPlannerShape, seed: number, classes: readonly number[][]): void {
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

