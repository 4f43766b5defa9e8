import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '@agentflow/core';
import {
  byteLevelVocabSize,
  createByteLevelTokenizerFiles,
  createRandomModel,
  getModelPreset,
  type Qwen3Config,
  saveModelFolder,
  trainByteLevelBpe,
} from '@agentflow/models';
import { ATTRIBUTES as TASK_WORLD_ATTRIBUTES } from './templates';

/**
 * The shape of the world's random planner: an ordinary Qwen3 with transformers' initialisation
 * (normal(0, initializer_range) matrices, norms at 1), which the warm start trains in full; see
 * the trainer README, "The embedded default's planner".
 */
export interface WorldPlannerShape {
  hiddenSize: number;
  layers: number;
  heads: number;
  keyValueHeads: number;
  intermediateSize: number;
  ropeTheta: number;
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
 * merged), a Qwen3 shape, and transformers' random initialisation ({@link createRandomModel}). Writes
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
  mkdirSync(dir, { recursive: true });
  await saveModelFolder(dir, model, { tokenizer });
  writeFileSync(join(dir, 'agentflow-policy.json'), `${JSON.stringify({ seed, ...shape }, null, 2)}\n`);
}
