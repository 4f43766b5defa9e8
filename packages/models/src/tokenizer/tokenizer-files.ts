import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';
import { DECODER_BOUNDS } from '../config/decoder-shape';
import { folderFile, parseFolderJson, readFolderJson, readFolderText } from '../weights/folder-files';
import type { CountedJsonContainer } from '../weights/json-structure';
import {
  checkGenerationConfig,
  checkMergesText,
  checkSpecialTokensMap,
  checkTokenIdMap,
  checkTokenizerConfig,
  checkTokenizerJson,
  mergesBound,
  type TokenIdBound,
} from './check-tokenizer-contents';

const MiB = 1024 * 1024;

/**
 * Largest size of each tokenizer file a folder may hold, checked before it is read. The real
 * ones sit far inside: Qwen3's tokenizer.json is 11.4 MB and its tokenizer_config.json 9.7 KB,
 * Llama 3.1's 9.1 MB and 51 KB, Gemma 3's tokenizer.json 33 MB; Qwen's vocab.json 2.8 MB and
 * merges.txt 1.7 MB; a chat template a few KB.
 */
export const TOKENIZER_FILE_LIMITS = {
  'tokenizer.json': 64 * MiB,
  'tokenizer_config.json': 16 * MiB,
  'vocab.json': 32 * MiB,
  'merges.txt': 32 * MiB,
  'added_tokens.json': 16 * MiB,
  'special_tokens_map.json': 1 * MiB,
  'generation_config.json': 1 * MiB,
  'chat_template.jinja': 1 * MiB,
} as const;

/** A file of a tokenizer folder that this package reads or copies. */
export type TokenizerFileName = keyof typeof TOKENIZER_FILE_LIMITS;

/**
 * Token ids of a folder without config.json are below 2^20: four times the largest vocabulary
 * published (Gemma 3's 262,144), and small enough that a vocabulary of millions of entries is
 * refused before it is parsed.
 */
export const DEFAULT_MAX_TOKEN_ID = 2 ** 20;

/**
 * The bound on the token ids of the folder `dir`: config.json's `vocab_size` when the folder has
 * a config.json that states one (the embedding has that many rows), else {@link DEFAULT_MAX_TOKEN_ID}.
 */
export function tokenIdBound(dir: string): TokenIdBound {
  const path = folderFile(dir, 'config.json');
  const fallback = { max: DEFAULT_MAX_TOKEN_ID, source: 'the bound for a folder without a vocab_size in config.json, 2^20' };
  if (path === undefined) return fallback;
  const config = readFolderJson(path);
  const vocabSize = typeof config === 'object' && config !== null ? (config as { vocab_size?: unknown }).vocab_size : undefined;
  if (vocabSize === undefined) return fallback;
  if (typeof vocabSize !== 'number' || !Number.isInteger(vocabSize) || vocabSize <= 0 || vocabSize > DECODER_BOUNDS.vocabSize) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `${path}: vocab_size is ${describeValue(vocabSize)}; expected a positive integer of at most ${DECODER_BOUNDS.vocabSize}.`,
      details: { path, key: 'vocab_size' },
    });
  }
  return { max: vocabSize, source: "config.json's vocab_size" };
}

function counted(path: readonly string[], bound: TokenIdBound, what = 'the token id bound'): CountedJsonContainer {
  return { path, max: bound.max, bound: `${what} (${bound.source})` };
}

/** Containers counted before parsing, so that millions of entries cost a scan, not a parse. */
function countedContainers(name: TokenizerFileName, bound: TokenIdBound): CountedJsonContainer[] {
  switch (name) {
    case 'tokenizer.json':
      return [counted(['model', 'vocab'], bound), counted(['model', 'merges'], mergesBound(bound), 'the merge bound'), counted(['added_tokens'], bound)];
    case 'tokenizer_config.json':
      return [counted(['added_tokens_decoder'], bound)];
    case 'vocab.json':
    case 'added_tokens.json':
      return [counted([], bound)];
    default:
      return [];
  }
}

function parseJson(name: TokenizerFileName, path: string, text: string, bound: TokenIdBound): unknown {
  return parseFolderJson(text, path, countedContainers(name, bound));
}

/** The text of a tokenizer file, checked for its kind (type, size, UTF-8, depth, ids) as it would be loaded. */
function readChecked(name: TokenizerFileName, path: string, bound: TokenIdBound): { text: string; value: unknown } {
  const text = readFolderText(path, TOKENIZER_FILE_LIMITS[name], `a ${name}`);
  switch (name) {
    case 'tokenizer.json':
      return { text, value: checkTokenizerJson(parseJson(name, path, text, bound), path, bound) };
    case 'tokenizer_config.json':
      return { text, value: checkTokenizerConfig(parseJson(name, path, text, bound), path, bound) };
    case 'vocab.json':
    case 'added_tokens.json':
      return { text, value: checkTokenIdMap(parseJson(name, path, text, bound), path, bound) };
    case 'generation_config.json':
      return { text, value: checkGenerationConfig(parseJson(name, path, text, bound), path, bound) };
    case 'special_tokens_map.json':
      return { text, value: checkSpecialTokensMap(parseJson(name, path, text, bound), path) };
    case 'merges.txt':
      checkMergesText(text, path, bound);
      return { text, value: text };
    case 'chat_template.jinja':
      return { text, value: text };
    default:
      return assertNever(name, 'tokenizer file');
  }
}

/**
 * Reads the tokenizer file `name` of the folder `dir` the way a loader may trust it: a regular
 * file inside the folder (a link only to one), at most its {@link TOKENIZER_FILE_LIMITS} size,
 * UTF-8, JSON nested at most 64 deep, every token id a non-negative integer below `bound` and
 * no vocabulary longer. Undefined when the folder has no such file. Returns the text as read
 * and, for JSON files, the parsed value.
 */
export function readTokenizerFile(dir: string, name: TokenizerFileName, bound: TokenIdBound): { path: string; text: string; value: unknown } | undefined {
  const path = folderFile(dir, name);
  return path === undefined ? undefined : { path, ...readChecked(name, path, bound) };
}
