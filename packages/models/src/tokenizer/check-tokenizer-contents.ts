import { AgentFlowError, describeValue } from '@agentflow/core';

/** The exclusive bound on token ids of a folder, and where it comes from (named in errors). */
export interface TokenIdBound {
  max: number;
  /** "config.json's vocab_size", or the default's reason. */
  source: string;
}

/**
 * Merges a BPE may list per token id. A BPE trained by merging lists one merge per token; one
 * converted from tiktoken lists every pair of tokens that forms a token, which is more: Llama 3's
 * tokenizer.json has 280,147 merges for 128,256 ids (2.2 a token).
 */
export const MERGES_PER_TOKEN_ID = 4;

/** The bound on the merges of a tokenizer whose ids are below `bound` ({@link MERGES_PER_TOKEN_ID} per id). */
export function mergesBound(bound: TokenIdBound): TokenIdBound {
  return { max: MERGES_PER_TOKEN_ID * bound.max, source: `${MERGES_PER_TOKEN_ID} merges per token id below ${bound.max} (${bound.source})` };
}

/** Longest chat template, in characters (Qwen3's is 4,116; the longest published ones ~30,000). */
export const MAX_CHAT_TEMPLATE_CHARS = 1024 * 1024;

/** Most named chat templates in one tokenizer_config.json (transformers ships default, tool_use, rag). */
const MAX_NAMED_TEMPLATES = 64;

/** Most ids in one generation_config.json field (`eos_token_id` lists two or three). */
const MAX_ID_LIST = 1024;

const DECIMAL_ID = /^(0|[1-9][0-9]*)$/;

function refuse(file: string, message: string, details: Record<string, unknown> = {}): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_CONFIG', message: `${file}: ${message}`, details: { path: file, ...details } });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : describeValue(value);
}

function objectAt(value: unknown, file: string, where: string, expected: string): Record<string, unknown> {
  if (!isRecord(value)) throw refuse(file, `${where} is ${kindOf(value)}; expected ${expected}.`, { key: where });
  return value;
}

function isTokenId(value: unknown, bound: TokenIdBound): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < bound.max;
}

function checkId(value: unknown, file: string, where: string, bound: TokenIdBound): void {
  if (!isTokenId(value, bound)) {
    throw refuse(file, `${where} is ${describeValue(value)}; a token id is a non-negative integer below ${bound.max} (${bound.source}).`, {
      key: where,
      value: typeof value === 'number' ? value : String(value),
    });
  }
}

function checkCount(length: number, file: string, where: string, bound: TokenIdBound, what = 'the token id bound'): void {
  if (length > bound.max) {
    throw refuse(file, `${where} has ${length} entries; expected at most ${bound.max}, ${what} (${bound.source}).`, { key: where, length });
  }
}

/** Token -> id: at most `bound.max` entries, each id below it (the name of a token made only for the error). */
function checkIdMap(map: Record<string, unknown>, file: string, where: string, bound: TokenIdBound): void {
  let entries = 0;
  for (const token in map) {
    entries++;
    const id = map[token];
    if (!isTokenId(id, bound)) checkId(id, file, where === '' ? `the id of ${describeValue(token, 40)}` : `${where}[${describeValue(token, 40)}]`, bound);
  }
  checkCount(entries, file, where === '' ? 'the file' : where, bound);
}

/** `model.vocab` (token -> id, or Unigram's [token, score] list), `model.merges` and `added_tokens`. */
export function checkTokenizerJson(value: unknown, file: string, bound: TokenIdBound): Record<string, unknown> {
  const root = objectAt(value, file, 'the file', 'a JSON object (a tokenizers library tokenizer.json)');
  if (root.model !== undefined) {
    const model = objectAt(root.model, file, 'model', 'an object with the vocabulary');
    if (Array.isArray(model.vocab)) {
      checkCount(model.vocab.length, file, 'model.vocab', bound);
    } else if (model.vocab !== undefined) {
      checkIdMap(objectAt(model.vocab, file, 'model.vocab', 'an object of token -> id or a list of [token, score]'), file, 'model.vocab', bound);
    }
    if (model.merges !== undefined && model.merges !== null) {
      if (!Array.isArray(model.merges)) throw refuse(file, `model.merges is ${kindOf(model.merges)}; expected a list of merges.`, { key: 'model.merges' });
      checkCount(model.merges.length, file, 'model.merges', mergesBound(bound), 'the merge bound');
    }
  }
  if (root.added_tokens !== undefined && root.added_tokens !== null) {
    if (!Array.isArray(root.added_tokens)) throw refuse(file, `added_tokens is ${kindOf(root.added_tokens)}; expected a list of {id, content}.`, { key: 'added_tokens' });
    checkCount(root.added_tokens.length, file, 'added_tokens', bound);
    root.added_tokens.forEach((token, index) => {
      const entry = objectAt(token, file, `added_tokens[${index}]`, 'an object {id, content, ...}');
      checkId(entry.id, file, `added_tokens[${index}].id`, bound);
      if (typeof entry.content !== 'string') throw refuse(file, `added_tokens[${index}].content is ${kindOf(entry.content)}; expected the token's text.`);
    });
  }
  return root;
}

function checkTemplateText(value: unknown, file: string, where: string): void {
  if (typeof value !== 'string') throw refuse(file, `${where} is ${kindOf(value)}; expected the Jinja template text.`, { key: where });
  if (value.length > MAX_CHAT_TEMPLATE_CHARS) {
    throw refuse(file, `${where} is ${value.length} characters; a chat template is at most ${MAX_CHAT_TEMPLATE_CHARS}.`, { key: where, length: value.length });
  }
}

/** `chat_template` (text, or a list of {name, template}) and `added_tokens_decoder` (id -> token). */
export function checkTokenizerConfig(value: unknown, file: string, bound: TokenIdBound): Record<string, unknown> {
  const root = objectAt(value, file, 'the file', 'a JSON object (a transformers tokenizer_config.json)');
  const template = root.chat_template;
  if (Array.isArray(template)) {
    if (template.length > MAX_NAMED_TEMPLATES) throw refuse(file, `chat_template lists ${template.length} templates; expected at most ${MAX_NAMED_TEMPLATES}.`);
    template.forEach((entry, index) => {
      const named = objectAt(entry, file, `chat_template[${index}]`, 'an object {name, template}');
      if (typeof named.name !== 'string') throw refuse(file, `chat_template[${index}].name is ${kindOf(named.name)}; expected a name.`);
      checkTemplateText(named.template, file, `chat_template[${index}].template`);
    });
  } else if (template !== undefined && template !== null) {
    checkTemplateText(template, file, 'chat_template');
  }
  if (root.added_tokens_decoder !== undefined && root.added_tokens_decoder !== null) {
    const decoder = objectAt(root.added_tokens_decoder, file, 'added_tokens_decoder', 'an object of id -> token');
    const entries = Object.entries(decoder);
    checkCount(entries.length, file, 'added_tokens_decoder', bound);
    for (const [id, token] of entries) {
      const where = `added_tokens_decoder[${describeValue(id, 40)}]`;
      checkId(DECIMAL_ID.test(id) && id.length <= 16 ? Number(id) : id, file, `the key of ${where}`, bound);
      const entry = objectAt(token, file, where, 'an object {content, ...}');
      if (typeof entry.content !== 'string') throw refuse(file, `${where}.content is ${kindOf(entry.content)}; expected the token's text.`);
    }
  }
  return root;
}

/** vocab.json and added_tokens.json: token -> id. */
export function checkTokenIdMap(value: unknown, file: string, bound: TokenIdBound): Record<string, unknown> {
  const root = objectAt(value, file, 'the file', 'a JSON object of token -> id');
  checkIdMap(root, file, '', bound);
  return root;
}

/** generation_config.json: its token ids, one or a list each. */
export function checkGenerationConfig(value: unknown, file: string, bound: TokenIdBound): Record<string, unknown> {
  const root = objectAt(value, file, 'the file', 'a JSON object (a transformers generation_config.json)');
  for (const key of ['bos_token_id', 'eos_token_id', 'pad_token_id', 'decoder_start_token_id']) {
    const ids = root[key];
    if (ids === undefined || ids === null) continue;
    if (!Array.isArray(ids)) {
      checkId(ids, file, key, bound);
      continue;
    }
    if (ids.length > MAX_ID_LIST) throw refuse(file, `${key} lists ${ids.length} ids; expected at most ${MAX_ID_LIST}.`, { key });
    ids.forEach((id, index) => {
      checkId(id, file, `${key}[${index}]`, bound);
    });
  }
  return root;
}

/** special_tokens_map.json: token names -> tokens; nothing counted beyond its size and depth. */
export function checkSpecialTokensMap(value: unknown, file: string): Record<string, unknown> {
  return objectAt(value, file, 'the file', 'a JSON object of special token names -> tokens');
}

/** merges.txt: one merge a line, after an optional `#version` line. */
export function checkMergesText(text: string, file: string, bound: TokenIdBound): void {
  const merges = mergesBound(bound);
  let lines = 0;
  for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) {
    if (++lines > merges.max + 1) {
      throw refuse(file, `has more than ${merges.max + 1} lines; expected at most ${merges.source}.`);
    }
  }
}
