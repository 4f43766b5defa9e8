import { resolve } from 'node:path';
import { AgentFlowError, type ChatMessage, importOptional } from '@agentflow/core';
import { byteLevelTokenBytes, unicodeToByteMap } from './byte-to-unicode';
import { type ChatTemplate, compileChatTemplate } from './chat-template';
import { bpeModelOf, installFastBpe } from './fast-bpe';
import type { REQUIRED_TOKENIZER_FILES } from './copy-tokenizer-files';
import { readTokenizerFile, tokenIdBound } from './tokenizer-files';

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
   * the generation prompt with an empty `<think>\n\n</think>\n\n` block. The thinking switch
   * applies only where the template has one (it names `enable_thinking`, as Qwen3's does): for a
   * template without it (Qwen2.5's, Llama 3.1's, which never think) `enable_thinking: false` (or
   * null) is already what it does and is not passed on, and any other value is refused
   * (INVALID_ARGUMENT naming the template's file), at load for these kwargs and at render for a
   * call's. Names that are options of apply_chat_template rather than variables (`tokenize`,
   * `chat_template`, ...) are refused.
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

/** Qwen3's thinking switch: a template variable that only some templates read. */
const THINKING_SWITCH = 'enable_thinking';

/**
 * `kwargs` for `template`: the thinking switch dropped when the template has none and it asks for
 * what such a template does anyway (no thinking), refused when it asks for thinking.
 */
function applyThinkingSwitch(kwargs: Record<string, unknown>, template: ChatTemplate, file: string): Record<string, unknown> {
  if (!Object.hasOwn(kwargs, THINKING_SWITCH) || template.mentions(THINKING_SWITCH)) return kwargs;
  const value = kwargs[THINKING_SWITCH];
  if (value !== false && value !== null && value !== undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${file}: chatTemplateKwargs.${THINKING_SWITCH} is ${JSON.stringify(value)}, but this chat template has no thinking switch (it never reads ${THINKING_SWITCH}; Qwen3's does, Qwen2.5's and Llama 3.1's do not), so the model cannot be asked to think; set ${THINKING_SWITCH} to false or remove it.`,
      details: { path: file, name: THINKING_SWITCH, value },
    });
  }
  const { [THINKING_SWITCH]: _off, ...rest } = kwargs;
  return rest;
}

/** The template a chat renders with: chat_template.jinja when the folder has one, as transformers reads it. */
interface TemplateSource {
  /** The template text, or named templates (`default`, `tool_use`, ...). */
  template: string | Readonly<Record<string, string>>;
  /** The file it came from, named in errors. */
  file: string;
}

function templateSourceOf(config: Record<string, unknown>, configPath: string, jinja: { path: string; text: string } | undefined): TemplateSource | undefined {
  if (jinja !== undefined) return { template: jinja.text, file: jinja.path };
  const template = config.chat_template;
  if (typeof template === 'string' && template !== '') return { template, file: configPath };
  if (Array.isArray(template)) {
    // Checked by checkTokenizerConfig: a list of { name, template }.
    const named = Object.fromEntries((template as { name: string; template: string }[]).map(({ name, template: text }) => [name, text]));
    return { template: named, file: configPath };
  }
  return undefined;
}

/** The special token attributes transformers.js hands a chat template (`bos_token`, ...), as it reads them. */
const SPECIAL_TOKEN_ATTRIBUTES = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'] as const;

function specialTokenVariables(config: Record<string, unknown>, file: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const key of SPECIAL_TOKEN_ATTRIBUTES) {
    const item = Object.hasOwn(config, key) ? config[key] : undefined;
    if (!item) continue;
    if (typeof item === 'object' && (item as { __type?: unknown }).__type !== 'AddedToken') {
      throw new AgentFlowError({ code: 'INVALID_CONFIG', message: `${file}: ${key} is an object without "__type": "AddedToken"; expected the token's text or an AddedToken.`, details: { path: file, key } });
    }
    const text = typeof item === 'object' ? (item as { content?: unknown }).content : item;
    if (text) variables[key] = String(text);
  }
  return variables;
}

/** The template a chat with these tools renders with: transformers.js's choice among named ones (tool_use when tools are given, else default). */
function templateTextOf(source: TemplateSource, tools: unknown): string {
  if (typeof source.template === 'string') return source.template;
  const named = source.template;
  const text = tools !== null && Object.hasOwn(named, 'tool_use') ? named.tool_use : Object.hasOwn(named, 'default') ? named.default : undefined;
  if (text === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `${source.file}: chat_template names ${Object.keys(named).map((name) => JSON.stringify(name)).join(', ')} but no "default" template; expected one named "default".`,
      details: { path: source.file },
    });
  }
  return text;
}

type Transformers = typeof import('@huggingface/transformers');
type HfTokenizer = InstanceType<Transformers['PreTrainedTokenizer']>;

/**
 * The tokenizer class `tokenizer_class` names among transformers.js's tokenizers, as
 * AutoTokenizer picks it ("Fast" dropped); the base class for a name that is not a tokenizer.
 */
function tokenizerClassOf(transformers: Transformers, tokenizerClass: unknown): Transformers['PreTrainedTokenizer'] {
  const base = transformers.PreTrainedTokenizer;
  if (typeof tokenizerClass !== 'string') return base;
  const name = tokenizerClass.replace(/Fast$/, '');
  const candidate: unknown = Object.hasOwn(transformers, name) ? (transformers as Record<string, unknown>)[name] : undefined;
  return typeof candidate === 'function' && (candidate === base || candidate.prototype instanceof base) ? (candidate as typeof base) : base;
}

/**
 * Loads `tokenizer.json` + `tokenizer_config.json` (and `chat_template.jinja`, whose template
 * replaces the config's, as in transformers) from `dir` with `@huggingface/transformers`, never
 * touching the network. A missing file gives a NOT_FOUND error naming it. Each file is checked
 * before it is read and trusted (readTokenizerFile: a regular file in the folder, its size
 * limit, UTF-8, nesting, token ids below config.json's vocab_size or 2^20); the chat template
 * renders under CHAT_TEMPLATE_LIMITS.
 */
export async function loadTokenizer(dir: string, settings: LoadTokenizerSettings = {}): Promise<ModelTokenizer> {
  checkTemplateKwargs(settings.chatTemplateKwargs);
  const folder = resolve(dir);
  const bound = tokenIdBound(folder);
  const required = (file: (typeof REQUIRED_TOKENIZER_FILES)[number]) => {
    const read = readTokenizerFile(folder, file, bound);
    if (read === undefined) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `Tokenizer file ${file} is missing from ${folder}; a model folder needs tokenizer.json and tokenizer_config.json (agentflow model init writes both).`,
        details: { dir: folder, file },
      });
    }
    return read;
  };
  const tokenizerJson = required('tokenizer.json');
  const tokenizerConfig = required('tokenizer_config.json');
  const config = tokenizerConfig.value as Record<string, unknown>;
  const templateSource = templateSourceOf(config, tokenizerConfig.path, readTokenizerFile(folder, 'chat_template.jinja', bound));
  const kwargs = settings.chatTemplateKwargs ?? {};
  if (templateSource !== undefined && Object.hasOwn(kwargs, THINKING_SWITCH)) {
    // Checked before the tokenizer is built, so that asking a template without the switch to think fails fast.
    applyThinkingSwitch(kwargs, compileChatTemplate(templateTextOf(templateSource, kwargs.tools ?? null), templateSource.file), templateSource.file);
  }
  // Loaded on first use: the library is large, and most commands never tokenize.
  const transformers = await importOptional(() => import('@huggingface/transformers'), {
    packageName: '@huggingface/transformers',
    feature: 'loadTokenizer',
  });
  let tokenizer: HfTokenizer;
  try {
    // What AutoTokenizer.from_pretrained does with the two files, once they are checked.
    const TokenizerClass = tokenizerClassOf(transformers, config.tokenizer_class);
    tokenizer = new TokenizerClass(tokenizerJson.value as object, config);
    // The same tokens from a faster merge loop (fast-bpe.ts); left as it is for other models.
    installFastBpe(bpeModelOf(tokenizer));
  } catch (cause) {
    throw new AgentFlowError({
      code: 'PARSE_ERROR',
      message: `Could not load the tokenizer in ${folder}: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause,
      details: { dir: folder },
    });
  }
  return wrapTokenizer(tokenizer, folder, kwargs, templateSource);
}

function wrapTokenizer(tokenizer: HfTokenizer, folder: string, defaultKwargs: ChatTemplateKwargs, templateSource: TemplateSource | undefined): ModelTokenizer {
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
  const compiled = new Map<string, ChatTemplate>();
  let cachedBytes: (Uint8Array | undefined)[] | undefined;

  const templateFor = (source: TemplateSource, tools: unknown): ChatTemplate => {
    const text = templateTextOf(source, tools);
    let template = compiled.get(text);
    if (template === undefined) {
      template = compileChatTemplate(text, source.file);
      compiled.set(text, template);
    }
    return template;
  };

  const applyChatTemplate = (messages: readonly ChatMessage[], settings: ApplyChatTemplateSettings = {}) => {
    checkTemplateKwargs(settings.chatTemplateKwargs);
    if (templateSource === undefined) {
      throw new AgentFlowError({
        code: 'INVALID_CONFIG',
        message: `The tokenizer in ${folder} has no chat_template in tokenizer_config.json.`,
        details: { dir: folder },
      });
    }
    const merged: Record<string, unknown> = { ...defaultKwargs, ...settings.chatTemplateKwargs };
    const tools = merged.tools ?? null;
    const documents = merged.documents ?? null;
    delete merged.tools;
    delete merged.documents;
    const template = templateFor(templateSource, tools);
    // The variables transformers.js's apply_chat_template passes, in its order.
    return template.render({
      messages: messages.map((message) => ({ ...message })),
      add_generation_prompt: settings.addGenerationPrompt ?? true,
      tools,
      documents,
      ...specialTokenVariables(tokenizer.config as Record<string, unknown>, templateSource.file),
      ...applyThinkingSwitch(merged, template, templateSource.file),
    });
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
