import type { DecoderConfig } from '../config/decoder-config';
import type { TokenizerFiles } from '../tokenizer/byte-level-tokenizer';

/**
 * generation_config.json as transformers writes it for a model config
 * (`GenerationConfig.from_model_config`, then `save_pretrained`: keys sorted, two-space indent):
 * the special token ids the model knows (`eos_token_id` as config.json has it, one id or a
 * list) and `do_sample: true`, as Qwen3's checkpoints ship it. `transformers_version` is left out.
 */
export function generationConfigJson(config: DecoderConfig, padTokenId: number | undefined): string {
  const eos = config.eosTokenIds.length === 1 ? config.eosTokenIds[0] : config.eosTokenIds;
  const fields: Record<string, unknown> = {
    ...(config.bosTokenId === undefined ? {} : { bos_token_id: config.bosTokenId }),
    do_sample: true,
    eos_token_id: eos,
    ...(padTokenId === undefined ? {} : { pad_token_id: padTokenId }),
  };
  return `${JSON.stringify(fields, null, 2)}\n`;
}

/** The id of tokenizer_config.json's `pad_token` among tokenizer.json's added tokens, when it names one. */
export function padTokenIdOf(files: TokenizerFiles): number | undefined {
  const pad = files.tokenizerConfig.pad_token;
  const content = typeof pad === 'string' ? pad : typeof pad === 'object' && pad !== null ? (pad as { content?: unknown }).content : undefined;
  if (typeof content !== 'string') return undefined;
  const added = files.tokenizerJson.added_tokens;
  if (!Array.isArray(added)) return undefined;
  const token = added.find((entry): entry is { id: number } => typeof entry === 'object' && entry !== null && entry.content === content && typeof entry.id === 'number');
  return token?.id;
}
