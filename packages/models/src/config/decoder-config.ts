import { AgentFlowError, describeValue, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { readFolderJson, requiredFolderFile } from '../weights/folder-files';
import { DECODER_ARCHITECTURES, type DecoderArchitecture, supportedArchitecturesText } from './decoder-architecture';
import { DECODER_BOUNDS, type DecoderLayerShape, qwen3HeadDim, qwen3ShapeIssues } from './decoder-shape';
import { parseRopeScaling, type RopeScaling, ropeTypeOf } from './rope-scaling';

/**
 * The fields of a Hugging Face `config.json` that change the maths, for one family: defaults are
 * those of its transformers config class ({@link DECODER_ARCHITECTURES}); unknown keys pass through
 * untouched so that a real checkpoint's config loads. Every size is bounded by {@link DECODER_BOUNDS}.
 */
export function decoderHfConfigSchema(architecture: DecoderArchitecture) {
  const { defaults, family } = DECODER_ARCHITECTURES[architecture];
  const bounds = DECODER_BOUNDS;
  return z
    .object({
      model_type: z.string().optional().describe('The family: qwen2, qwen3 or llama (absent: read from architectures, else qwen3).'),
      architectures: z.array(z.string()).optional().describe('The transformers class, e.g. Qwen2ForCausalLM.'),
      vocab_size: z.number().int().positive().max(bounds.vocabSize).default(defaults.vocabSize).describe('Rows of the embedding and the LM head.'),
      hidden_size: z.number().int().positive().max(bounds.hiddenSize).default(defaults.hiddenSize).describe('Width of the residual stream.'),
      intermediate_size: z.number().int().positive().max(bounds.intermediateSize).default(defaults.intermediateSize).describe('Width of the SiLU-gated MLP.'),
      num_hidden_layers: z.number().int().positive().max(bounds.layers).default(defaults.numHiddenLayers).describe('Number of decoder layers.'),
      num_attention_heads: z.number().int().positive().max(bounds.heads).default(defaults.numAttentionHeads).describe('Query heads per layer.'),
      num_key_value_heads: z
        .number()
        .int()
        .positive()
        .max(bounds.heads)
        .optional()
        .describe('Key/value heads (grouped-query attention); defaults to num_attention_heads.'),
      head_dim: z
        .number()
        .int()
        .positive()
        .max(bounds.headDim)
        .optional()
        .describe('Width of one head; default hidden_size / num_attention_heads (Qwen3 sets it explicitly, 128, even when that differs).'),
      hidden_act: z.literal('silu').default('silu').describe(`MLP activation; ${family} use SiLU only.`),
      max_position_embeddings: z
        .number()
        .int()
        .positive()
        .max(bounds.maxPositionEmbeddings)
        .default(defaults.maxPositionEmbeddings)
        .describe('Longest sequence the model supports.'),
      rms_norm_eps: z.number().positive().default(defaults.rmsNormEps).describe('Epsilon inside every RMSNorm.'),
      rope_theta: z.number().positive().optional().describe(`RoPE base (transformers 4.x key); default ${defaults.ropeTheta}.`),
      rope_parameters: z
        .object({
          rope_type: z.string().default('default').describe('RoPE type, as rope_scaling names it.'),
          rope_theta: z.number().positive().optional().describe('RoPE base (transformers 5.x key).'),
        })
        .passthrough()
        .nullish()
        .describe('transformers 5.x RoPE settings: the base and the scaling of rope_scaling in one object.'),
      rope_scaling: z
        .object({ rope_type: z.string().optional(), type: z.string().optional() })
        .passthrough()
        .nullish()
        .describe('RoPE scaling: absent, "default", "linear" or "llama3" (see RopeScaling); others are refused.'),
      tie_word_embeddings: z.boolean().default(false).describe('LM head shares the embedding matrix.'),
      attention_bias: z.boolean().default(false).describe('Qwen3 and Llama: biases on q/k/v/o. Qwen2 has no such key: its q/k/v always carry biases.'),
      mlp_bias: z.boolean().default(false).describe('Llama: biases on gate/up/down. Ignored by the Qwen families, as transformers ignores it.'),
      use_sliding_window: z.boolean().default(false).describe('Qwen2/Qwen3 sliding-window attention; not supported.'),
      bos_token_id: z.number().int().nullish().describe('Begin-of-sequence token id.'),
      eos_token_id: z
        .union([z.number().int(), z.array(z.number().int())])
        .nullish()
        .describe('End-of-sequence token id(s).'),
      initializer_range: z.number().positive().default(0.02).describe('Std of the random initialisation.'),
    })
    .passthrough();
}

/** A validated decoder configuration (Qwen2/Qwen2.5, Qwen3 or Llama), in the names this package uses. */
export interface DecoderConfig {
  /** The family, config.json's `model_type`: which layer the weights describe (DECODER_ARCHITECTURES). */
  architecture: DecoderArchitecture;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numHiddenLayers: number;
  numAttentionHeads: number;
  numKeyValueHeads: number;
  headDim: number;
  maxPositionEmbeddings: number;
  rmsNormEps: number;
  ropeTheta: number;
  /** RoPE frequency scaling (`rope_scaling`); `{ type: 'default' }` for none. */
  ropeScaling: RopeScaling;
  tieWordEmbeddings: boolean;
  /** config.json's `attention_bias`: q/k/v/o biases in Qwen3 and Llama; false (and meaningless) for Qwen2, whose q/k/v always have biases (biasedModules). */
  attentionBias: boolean;
  /** config.json's `mlp_bias`: gate/up/down biases in Llama; false for the Qwen families. */
  mlpBias: boolean;
  bosTokenId?: number;
  eosTokenIds: number[];
  initializerRange: number;
}

function invalid(message: string, details: Record<string, unknown>): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_CONFIG', message, details });
}

const CLASS_ARCHITECTURES = new Map(Object.values(DECODER_ARCHITECTURES).map((info) => [info.className, info.modelType]));

/**
 * The family of a config.json: its `model_type`; without one, its `architectures[0]` class; without
 * either, qwen3 (transformers' Qwen3Config, as this package read every config before). An unknown
 * model_type or class, or a class of another family than model_type, is INVALID_CONFIG naming it
 * and the supported ones.
 */
export function decoderArchitectureOf(raw: unknown, source = 'config.json'): DecoderArchitecture {
  const record = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const modelType = record.model_type;
  const classes = Array.isArray(record.architectures) ? record.architectures : [];
  const className = classes[0];
  const fromClass = typeof className === 'string' ? CLASS_ARCHITECTURES.get(className) : undefined;
  if (modelType === undefined) {
    if (className === undefined) return 'qwen3';
    if (fromClass !== undefined) return fromClass;
    throw invalid(`${source}: architectures names ${describeValue(className)} and there is no model_type; supported: ${supportedArchitecturesText()}.`, {
      source,
      architectures: classes,
    });
  }
  if (typeof modelType !== 'string' || !Object.hasOwn(DECODER_ARCHITECTURES, modelType)) {
    throw invalid(`${source}: model_type ${describeValue(modelType)} is not supported; supported: ${supportedArchitecturesText()}.`, { source, modelType });
  }
  const architecture = modelType as DecoderArchitecture;
  if (fromClass !== undefined && fromClass !== architecture) {
    throw invalid(
      `${source}: model_type ${JSON.stringify(modelType)} but architectures names ${JSON.stringify(className)}, a ${fromClass} class; the two must name one family.`,
      { source, modelType, architectures: classes },
    );
  }
  return architecture;
}

/** The RoPE scaling of a config: rope_parameters' (transformers 5) when it scales, else rope_scaling's. */
function ropeScalingOf(hf: { rope_scaling?: Record<string, unknown> | null; rope_parameters?: Record<string, unknown> | null }, source: string): RopeScaling {
  const legacy = parseRopeScaling(hf.rope_scaling, 'rope_scaling', source);
  const current = parseRopeScaling(hf.rope_parameters, 'rope_parameters', source);
  if (current.type !== 'default' && legacy.type !== 'default' && JSON.stringify(current) !== JSON.stringify(legacy)) {
    throw invalid(`${source}: rope_scaling (${ropeTypeOf(hf.rope_scaling)}) and rope_parameters (${ropeTypeOf(hf.rope_parameters)}) scale RoPE differently; keep one.`, { source });
  }
  return current.type !== 'default' ? current : legacy;
}

/**
 * Validates a parsed `config.json` object of any supported family (decoderArchitectureOf); `source`
 * names it in errors. Refused, each naming the key: an unknown family, a size outside
 * DECODER_BOUNDS, a broken shape rule (qwen3ShapeIssues: heads not dividing the width, kv heads not
 * dividing heads, an odd head width), a weight matrix past 2^32 elements, sliding-window attention,
 * and a RoPE scaling other than default, linear or llama3.
 */
export function parseDecoderConfig(raw: unknown, source = 'config.json'): DecoderConfig {
  const architecture = decoderArchitectureOf(raw, source);
  const parsed = decoderHfConfigSchema(architecture).safeParse(raw);
  if (!parsed.success) {
    const name = architecture === 'qwen3' ? 'Qwen3' : DECODER_ARCHITECTURES[architecture].className.replace(/ForCausalLM$/, '');
    throw invalid(`Invalid ${name} config in ${source}: ${formatZodIssues(parsed.error).join('; ')}`, { source, architecture });
  }
  const hf = parsed.data;
  const numKeyValueHeads = hf.num_key_value_heads ?? hf.num_attention_heads;
  const shape: DecoderLayerShape = {
    hiddenSize: hf.hidden_size,
    intermediateSize: hf.intermediate_size,
    numAttentionHeads: hf.num_attention_heads,
    numKeyValueHeads,
    ...(hf.head_dim === undefined ? {} : { headDim: hf.head_dim }),
  };
  const issues = qwen3ShapeIssues(shape);
  if (issues.length > 0) {
    throw invalid(`${source}: ${issues.map((issue) => issue.message).join('; ')}.`, { source, keys: issues.map((issue) => issue.key) });
  }
  const headDim = qwen3HeadDim(shape);
  const matrices = [
    ['vocab_size x hidden_size (the embedding)', hf.vocab_size * hf.hidden_size],
    ['intermediate_size x hidden_size (the MLP)', hf.intermediate_size * hf.hidden_size],
    ['num_attention_heads x head_dim x hidden_size (q_proj)', hf.num_attention_heads * headDim * hf.hidden_size],
  ] as const;
  for (const [what, elements] of matrices) {
    if (elements > DECODER_BOUNDS.matrixElements) {
      throw invalid(`${source}: ${what} is ${elements} elements; one weight matrix holds at most 2^32 (${DECODER_BOUNDS.matrixElements}).`, { source, elements });
    }
  }
  if (hf.use_sliding_window && architecture !== 'llama') {
    throw invalid(`${source}: use_sliding_window=true is not supported.`, { source });
  }
  const ropeScaling = ropeScalingOf(hf, source);
  const eos = hf.eos_token_id;
  return {
    architecture,
    vocabSize: hf.vocab_size,
    hiddenSize: hf.hidden_size,
    intermediateSize: hf.intermediate_size,
    numHiddenLayers: hf.num_hidden_layers,
    numAttentionHeads: hf.num_attention_heads,
    numKeyValueHeads,
    headDim,
    maxPositionEmbeddings: hf.max_position_embeddings,
    rmsNormEps: hf.rms_norm_eps,
    ropeTheta: hf.rope_parameters?.rope_theta ?? hf.rope_theta ?? DECODER_ARCHITECTURES[architecture].defaults.ropeTheta,
    ropeScaling,
    tieWordEmbeddings: hf.tie_word_embeddings,
    attentionBias: architecture !== 'qwen2' && hf.attention_bias,
    mlpBias: architecture === 'llama' && hf.mlp_bias,
    ...(typeof hf.bos_token_id === 'number' ? { bosTokenId: hf.bos_token_id } : {}),
    eosTokenIds: eos === null || eos === undefined ? [] : Array.isArray(eos) ? eos : [eos],
    initializerRange: hf.initializer_range,
  };
}

/**
 * Reads and validates `dir/config.json`: a regular file inside the folder, at most
 * MAX_FOLDER_JSON_BYTES of UTF-8 JSON, of a supported family, with every size inside
 * {@link DECODER_BOUNDS} (see parseDecoderConfig). Nothing is allocated from it before it passes.
 */
export function loadDecoderConfig(dir: string): DecoderConfig {
  const path = requiredFolderFile(dir, 'config.json', 'expected a Hugging Face model folder');
  return parseDecoderConfig(readFolderJson(path), path);
}
