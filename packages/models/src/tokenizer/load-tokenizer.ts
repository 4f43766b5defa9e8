import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { AgentFlowError, type ChatMessage, importOptional } from '@agentflow/core';
import type { AutoTokenizer } from '@huggingface/transformers';
import { byteLevelTokenBytes, unicodeToByteMap } from './byte-to-unicode';
import { REQUIRED_TOKENIZER_FILES } from './copy-tokenizer-files';

/**
 * What a chat policy needs from a tokenizer: `@agentflow/llm`'s local policy adapter and this
 * package's generation use only this.
 */
export interface ChatTokenizer {
  /** Token ids of the chat rendered by the chat template, ending with the assistant header. */
  encodeChat(messages: readonly ChatMessage[]): number[];
  /** Text of the ids; special tokens are dropped. */
  decode(ids: readonly number[]): string;
  /** Ids that end a completion (the config's EOS and `<|im_end|>`, `<|endoftext|>`). */
  eosTokenIds: number[];
}

/** Variables handed to a chat template besides `messages` and `add_generation_prompt`. */
export type ChatTemplateKwargs = Readonly<Record<string, unknown>>;

/** How {@link ModelTokenizer.applyChatTemplate} renders one chat. */
export interface ApplyChatTemplateSettings {
  /** End with the assistant header (and whatever the template adds after it); default true. */
  addGenerationPrompt?: boolean;
  /** Merged over the tokenizer's {@link LoadTokenizerSettings.chatTemplateKwargs} for this call. */
  chatTemplateKwargs?: ChatTemplateKwargs;
}

/** A Hugging Face tokenizer loaded offline from a model folder. */
export interface ModelTokenizer extends ChatTokenizer {
  encode(text: string): number[];
  /** The chat rendered as text by the folder's chat template. */
  applyChatTemplate(messages: readonly ChatMessage[], settings?: ApplyChatTemplateSettings): string;
  padTokenId: number;
  /** Number of ids the tokenizer knows (may be less than the model's vocab_size). */
  size: number;
  /** The bytes of each ordinary token id (undefined for special tokens), for constrained decoding. */
  tokenBytes(): (Uint8Array | undefined)[];
  /** Ids of the special (added) tokens. */
  specialTokenIds: number[];
}

/** Settings of {@link loadTokenizer}. */
export interface LoadTokenizerSettings {
  /**
   * Extra variables for the folder's chat template, used by `applyChatTemplate` and `encodeChat`
   * (transformers.js spreads them into the template context, as Python's
   * `apply_chat_template(**kwargs)` does). Default none: the template's own defaults. Qwen3's
   * template thinks by default; `{ enable_thinking: false }` is its non-thinking mode, which ends
   * the generation prompt with an empty `<think>\n\n</think>\n\n` block. Names that are options
   * of apply_chat_template rather than variables (`tokenize`, `chat_template`, ...) are refused.
   */
  chatTemplateKwargs?: ChatTemplateKwargs;
}

/** apply_chat_template options (and `messages`) that a template kwarg must not shadow. */
const RESERVED_TEMPLATE_NAMES = new Set([
  'messages',
  'add_generation_prompt',
  'chat_template',
  'tokenize',
  'padding',
  'truncation',
  'max_length',
  'return_tensor',
  'return_dict',
  'tokenizer_kwargs',
]);

function checkTemplateKwargs(kwargs: ChatTemplateKwargs | undefined): void {
  for (const name of Object.keys(kwargs ?? {})) {
    if (RESERVED_TEMPLATE_NAMES.has(name)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `chatTemplateKwargs may not set ${JSON.stringify(name)}: it is an option of apply_chat_template, not a template variable${name === 'add_generation_prompt' ? ' (use addGenerationPrompt)' : ''}.`,
        details: { name },
      });
    }
  }
}

/**
 * Loads `tokenizer.json` + `tokenizer_config.json` from `dir` with `@huggingface/transformers`,
 * never touching the network. A missing file gives a NOT_FOUND error naming it.
 */
export async function loadTokenizer(dir: string, settings: LoadTokenizerSettings = {}): Promise<ModelTokenizer> {
  checkTemplateKwargs(settings.chatTemplateKwargs);
  const folder = resolve(dir);
  for (const file of REQUIRED_TOKENIZER_FILES) {
    if (!existsSync(join(folder, file))) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `Tokenizer file ${file} is missing from ${folder}; a model folder needs tokenizer.json and tokenizer_config.json (agentflow model init writes both).`,
        details: { dir: folder, file },
      });
    }
  }
  // Loaded on first use: the library is large, and most commands never tokenize.
  const { AutoTokenizer: autoTokenizer, env } = await importOptional(() => import('@huggingface/transformers'), {
    packageName: '@huggingface/transformers',
    feature: 'loadTokenizer',
  });
  // transformers.js reads `env` when loading; set it for this call only and restore it.
  const saved = {
    allowRemoteModels: env.allowRemoteModels,
    allowLocalModels: env.allowLocalModels,
    localModelPath: env.localModelPath,
  };
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = `${dirname(folder)}/`;
  let tokenizer: Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>;
  try {
    tokenizer = await autoTokenizer.from_pretrained(basename(folder), { local_files_only: true });
  } catch (cause) {
    throw new AgentFlowError({
      code: 'PARSE_ERROR',
      message: `Could not load the tokenizer in ${folder}: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause,
      details: { dir: folder },
    });
  } finally {
    Object.assign(env, saved);
  }
  return wrapTokenizer(tokenizer, folder, settings.chatTemplateKwargs ?? {});
}

type HfTokenizer = Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>;

function wrapTokenizer(tokenizer: HfTokenizer, folder: string, defaultKwargs: ChatTemplateKwargs): ModelTokenizer {
  const vocabulary = tokenizer.get_vocab() as Map<string, number> | Record<string, number>;
  const entries = vocabulary instanceof Map ? [...vocabulary.entries()] : Object.entries(vocabulary);
  const size = entries.reduce((max, [, id]) => Math.max(max, id + 1), 0);
  const specialTokenIds = [...(tokenizer.all_special_ids as number[])];
  const special = new Set(specialTokenIds);
  const eosTokenIds = new Set<number>();
  for (const name of ['<|im_end|>', '<|endoftext|>']) {
    const id = entries.find(([token]) => token === name)?.[1];
    if (id !== undefined) eosTokenIds.add(id);
  }
  if (typeof tokenizer.eos_token_id === 'number') eosTokenIds.add(tokenizer.eos_token_id);
  let cachedBytes: (Uint8Array | undefined)[] | undefined;

  const applyChatTemplate = (messages: readonly ChatMessage[], settings: ApplyChatTemplateSettings = {}) => {
    checkTemplateKwargs(settings.chatTemplateKwargs);
    if (!tokenizer.chat_template) {
      throw new AgentFlowError({
        code: 'INVALID_CONFIG',
        message: `The tokenizer in ${folder} has no chat_template in tokenizer_config.json.`,
        details: { dir: folder },
      });
    }
    return tokenizer.apply_chat_template(messages.map((message) => ({ ...message })), {
      ...defaultKwargs,
      ...settings.chatTemplateKwargs,
      tokenize: false,
      add_generation_prompt: settings.addGenerationPrompt ?? true,
    }) as string;
  };
  const encode = (text: string) => tokenizer.encode(text, { add_special_tokens: false }) as number[];
  return {
    encode,
    decode: (ids) => (ids.length === 0 ? '' : tokenizer.decode([...ids], { skip_special_tokens: true })),
    applyChatTemplate,
    encodeChat: (messages) => encode(applyChatTemplate(messages, { addGenerationPrompt: true })),
    eosTokenIds: [...eosTokenIds],
    padTokenId: typeof tokenizer.pad_token_id === 'number' ? tokenizer.pad_token_id : [...eosTokenIds][0] ?? 0,
    size,
    specialTokenIds,
    tokenBytes() {
      if (cachedBytes) return cachedBytes;
      const inverse = unicodeToByteMap();
      const bytes = new Array<Uint8Array | undefined>(size).fill(undefined);
      for (const [token, id] of entries) {
        if (!special.has(id)) bytes[id] = byteLevelTokenBytes(token, inverse);
      }
      cachedBytes = bytes;
      return bytes;
    },
  };
}
