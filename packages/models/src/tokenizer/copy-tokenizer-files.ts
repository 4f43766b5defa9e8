import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError } from '@agentflow/core';

/** Files every tokenizer folder must have: what {@link loadTokenizer} reads. */
export const REQUIRED_TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json'] as const;

/**
 * Files copied when present: the slow tokenizer's vocabulary and merges, the special tokens map,
 * and the checkpoint's sampling defaults, as a Hugging Face model folder ships them.
 */
export const OPTIONAL_TOKENIZER_FILES = ['vocab.json', 'merges.txt', 'special_tokens_map.json', 'generation_config.json'] as const;

/**
 * Copies the tokenizer files of the folder `from` (e.g. a downloaded Qwen3 checkpoint) into `dir`,
 * created if needed: tokenizer.json and tokenizer_config.json, which must exist, and any of
 * {@link OPTIONAL_TOKENIZER_FILES}. Returns the names copied.
 */
export function copyTokenizerFiles(from: string, dir: string): string[] {
  const source = resolve(from);
  for (const file of REQUIRED_TOKENIZER_FILES) {
    if (!existsSync(join(source, file))) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `Cannot copy the tokenizer from ${source}: ${file} is missing; point to a Hugging Face model folder with tokenizer.json and tokenizer_config.json.`,
        details: { dir: source, file },
      });
    }
  }
  mkdirSync(dir, { recursive: true });
  const sameFolder = resolve(dir) === source;
  const copied: string[] = [];
  for (const file of [...REQUIRED_TOKENIZER_FILES, ...OPTIONAL_TOKENIZER_FILES]) {
    if (!existsSync(join(source, file))) continue;
    if (!sameFolder) copyFileSync(join(source, file), join(dir, file));
    copied.push(file);
  }
  return copied;
}
