import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { readTokenizerFile, tokenIdBound } from './tokenizer-files';

/** Files every tokenizer folder must have: what {@link loadTokenizer} reads. */
export const REQUIRED_TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json'] as const;

/**
 * Files copied when present: the slow tokenizer's vocabulary and merges, the special and added
 * tokens, the checkpoint's sampling defaults and the chat template file, as a Hugging Face model
 * folder ships them.
 */
export const OPTIONAL_TOKENIZER_FILES = [
  'vocab.json',
  'merges.txt',
  'special_tokens_map.json',
  'generation_config.json',
  'added_tokens.json',
  'chat_template.jinja',
] as const;

/**
 * Copies the tokenizer files of the folder `from` (e.g. a downloaded Qwen3 checkpoint) into `dir`,
 * created if needed: tokenizer.json and tokenizer_config.json, which must exist, and any of
 * {@link OPTIONAL_TOKENIZER_FILES}. Every file is checked as loadTokenizer checks it (a regular
 * file inside `from`, its size limit, UTF-8, nesting, token ids below `from`'s config.json
 * vocab_size or 2^20) before any is written. Returns the names copied.
 */
export function copyTokenizerFiles(from: string, dir: string): string[] {
  const source = resolve(from);
  const bound = tokenIdBound(source);
  const files = [...REQUIRED_TOKENIZER_FILES, ...OPTIONAL_TOKENIZER_FILES].map((file) => ({ file, read: readTokenizerFile(source, file, bound) }));
  for (const { file, read } of files) {
    if (read === undefined && (REQUIRED_TOKENIZER_FILES as readonly string[]).includes(file)) {
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
  for (const { file, read } of files) {
    if (read === undefined) continue;
    if (!sameFolder) writeFileSync(join(dir, file), read.text);
    copied.push(file);
  }
  return copied;
}
