import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { byteToUnicodeTable } from './byte-to-unicode';

/** Special tokens of the byte-level tokenizer, in id order after the 256 bytes (Qwen's names). */
export const BYTE_LEVEL_SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] as const;

/**
 * ChatML, the format of Qwen's chat template without tools or thinking blocks:
 * `<|im_start|>{role}\n{content}<|im_end|>\n` per message, then `<|im_start|>assistant\n`.
 */
export const CHATML_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/** The two JSON documents of a Hugging Face tokenizer folder. */
export interface TokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

export interface ByteLevelTokenizerSettings {
  /**
   * BPE merges in rank order (`"left right"`), e.g. from {@link trainByteLevelBpe}. Merged
   * tokens get ids after the specials (259, 260, ...). Default none: one token per byte.
   */
  merges?: readonly string[];
}

/**
 * A byte-level BPE tokenizer: token id = byte value for the 256 bytes, then the ChatML
 * specials, then one token per merge. Any text round-trips, and `AutoTokenizer` loads it like
 * Qwen's own.
 */
export function createByteLevelTokenizerFiles(settings: ByteLevelTokenizerSettings = {}): TokenizerFiles {
  const table = byteToUnicodeTable();
  const vocab: Record<string, number> = {};
  table.forEach((character, byte) => {
    vocab[character] = byte;
  });
  const merges = [...(settings.merges ?? [])];
  // Two merges may spell the same token ("ab c", "a bc"): it keeps its first id, so ids stay dense.
  let nextId = 256 + BYTE_LEVEL_SPECIAL_TOKENS.length;
  merges.forEach((merge, index) => {
    const [left, right] = merge.split(' ');
    if (left === undefined || right === undefined || !(left in vocab) || !(right in vocab)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Merge ${index} ${JSON.stringify(merge)} must join two tokens defined before it.`,
      });
    }
    if (!(left + right in vocab)) vocab[left + right] = nextId++;
  });
  const addedTokens = BYTE_LEVEL_SPECIAL_TOKENS.map((content, index) => ({
    id: 256 + index,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
  const tokenizerConfig = {
    tokenizer_class: 'Qwen2Tokenizer',
    add_bos_token: false,
    add_prefix_space: false,
    bos_token: null,
    eos_token: '<|im_end|>',
    pad_token: '<|endoftext|>',
    unk_token: null,
    model_max_length: 2048,
    clean_up_tokenization_spaces: false,
    errors: 'replace',
    split_special_tokens: false,
    chat_template: CHATML_TEMPLATE,
    added_tokens_decoder: Object.fromEntries(
      addedTokens.map(({ id, content }) => [
        String(id),
        { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true },
      ]),
    ),
  };
  return { tokenizerJson, tokenizerConfig };
}

/** Ids of a byte-level tokenizer with these merges: 256 bytes, the specials, one per distinct merged token. */
export function byteLevelVocabSize(merges: readonly string[] = []): number {
  const vocab = (createByteLevelTokenizerFiles({ merges }).tokenizerJson.model as { vocab: Record<string, number> }).vocab;
  return Object.keys(vocab).length + BYTE_LEVEL_SPECIAL_TOKENS.length;
}

/** Writes `tokenizer.json` and `tokenizer_config.json` into `dir` (created if needed). */
export function writeTokenizerFiles(dir: string, files: TokenizerFiles = createByteLevelTokenizerFiles()): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tokenizer.json'), `${JSON.stringify(files.tokenizerJson)}\n`);
  writeFileSync(join(dir, 'tokenizer_config.json'), `${JSON.stringify(files.tokenizerConfig, null, 2)}\n`);
}
