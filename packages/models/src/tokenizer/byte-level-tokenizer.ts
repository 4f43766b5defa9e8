import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/**
 * A byte-level BPE tokenizer with no merges: token id = byte value for the 256 bytes, then the
 * ChatML specials. Any text round-trips, and `AutoTokenizer` loads it like Qwen's own.
 */
export function createByteLevelTokenizerFiles(): TokenizerFiles {
  const table = byteToUnicodeTable();
  const vocab: Record<string, number> = {};
  table.forEach((character, byte) => {
    vocab[character] = byte;
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
      merges: [],
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

/** Writes `tokenizer.json` and `tokenizer_config.json` into `dir` (created if needed). */
export function writeTokenizerFiles(dir: string, files: TokenizerFiles = createByteLevelTokenizerFiles()): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tokenizer.json'), `${JSON.stringify(files.tokenizerJson)}\n`);
  writeFileSync(join(dir, 'tokenizer_config.json'), `${JSON.stringify(files.tokenizerConfig, null, 2)}\n`);
}
