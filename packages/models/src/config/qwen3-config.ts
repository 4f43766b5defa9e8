import { type DecoderConfig, decoderHfConfigSchema, loadDecoderConfig, parseDecoderConfig } from './decoder-config';

/**
 * The names this package had when it ran Qwen3 alone, kept for callers: each is the decoder
 * config's, for every family (Qwen2/Qwen2.5, Qwen3, Llama).
 */

/** {@link DecoderConfig}: a validated config of any supported family (its `architecture` says which). */
export type Qwen3Config = DecoderConfig;

/** {@link parseDecoderConfig}: a config.json of any supported family; without model_type and architectures, Qwen3. */
export const parseQwen3Config: (raw: unknown, source?: string) => Qwen3Config = parseDecoderConfig;

/** {@link loadDecoderConfig}: `dir/config.json` of any supported family. */
export const loadQwen3Config: (dir: string) => Qwen3Config = loadDecoderConfig;

/** The Qwen3 family's config.json schema (`Qwen3Config`'s defaults): decoderHfConfigSchema('qwen3'). */
export const qwen3HfConfigSchema = decoderHfConfigSchema('qwen3');

export {
  DECODER_BOUNDS,
  type DecoderLayerShape,
  QWEN3_BOUNDS,
  QWEN3_HF_SHAPE_KEYS,
  qwen3HeadDim,
  qwen3ShapeIssues,
  type Qwen3LayerShape,
  type Qwen3ShapeIssue,
  type Qwen3ShapeKeys,
} from './decoder-shape';
export { toHfConfig } from './hf-config-json';
