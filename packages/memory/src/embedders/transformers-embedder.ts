import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { type Embedder, checkEmbeddings, embedInBatches } from './embedder';

/** The part of `@huggingface/transformers` this embedder uses. */
export interface TransformersModule {
  env: { allowRemoteModels: boolean; localModelPath: string };
  pipeline(
    task: 'feature-extraction',
    model: string,
    options?: Record<string, unknown>,
  ): Promise<(texts: string[], options: { pooling: string; normalize: boolean }) => Promise<{ tolist(): unknown }>>;
}

const transformersEmbedderSettingsSchema = z.object({
  modelRoot: z
    .string()
    .min(1)
    .describe('Folder that holds model folders (transformers.js `env.localModelPath`); nothing is downloaded.'),
  model: z
    .string()
    .min(1)
    .describe('Model folder under modelRoot: config.json, tokenizer.json and onnx/model*.onnx (e.g. "all-MiniLM-L6-v2").'),
  dimensions: z.number().int().positive().optional().describe('Vector size; read from config.json `hidden_size` when omitted.'),
  pooling: z.enum(['mean', 'cls']).default('mean').describe('Token pooling (sentence-transformers models mostly use mean).'),
  normalize: z.boolean().default(true).describe('Unit-length vectors, as sentence-transformers returns them.'),
  dtype: z
    .enum(['fp32', 'fp16', 'q8'])
    .default('fp32')
    .describe('Which ONNX file to load: onnx/model.onnx (fp32), model_fp16.onnx, model_quantized.onnx (q8).'),
  batchSize: z.number().int().positive().default(32).describe('Texts per forward pass.'),
  loadTransformers: z
    .custom<() => Promise<TransformersModule>>((value) => typeof value === 'function', 'expected a function')
    .optional()
    .describe('Loads @huggingface/transformers; by default a dynamic import, since it is an optional peer.'),
});

/** Settings of {@link createTransformersEmbedder}. */
export type TransformersEmbedderSettings = z.input<typeof transformersEmbedderSettingsSchema>;

const ONNX_FILE = { fp32: 'model.onnx', fp16: 'model_fp16.onnx', q8: 'model_quantized.onnx' } as const;

// A variable specifier keeps bundlers and tsc from requiring the optional package.
const TRANSFORMERS_PACKAGE = '@huggingface/transformers';
const importTransformers = () => import(TRANSFORMERS_PACKAGE) as Promise<TransformersModule>;

/**
 * Feature extraction with @huggingface/transformers from a local model folder, offline
 * (`allowRemoteModels = false`). The folder is checked first, because transformers.js
 * reports a missing local model with an unhelpful error.
 */
export async function createTransformersEmbedder(settings: TransformersEmbedderSettings): Promise<Embedder> {
  const parsed = transformersEmbedderSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid transformers embedder settings:\n${formatZodIssues(parsed.error, 'settings').join('\n')}`,
    });
  }
  const resolved = parsed.data;
  const modelRoot = resolve(resolved.modelRoot);
  const folder = join(modelRoot, resolved.model);
  const onnxFile = join('onnx', ONNX_FILE[resolved.dtype]);
  const missing = ['config.json', 'tokenizer.json', onnxFile].filter((file) => !existsSync(join(folder, file)));
  if (missing.length > 0) {
    const found = existsSync(folder) ? readdirSync(folder).join(', ') || '(empty)' : '(folder does not exist)';
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `The local embedding model folder ${folder} lacks ${missing.join(', ')} (found: ${found}). Put a transformers.js model there (config.json, tokenizer.json, ${onnxFile}); models are never downloaded.`,
      details: { folder, missing },
    });
  }
  const config = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')) as { hidden_size?: unknown };
  const dimensions = resolved.dimensions ?? (typeof config.hidden_size === 'number' ? config.hidden_size : undefined);
  if (dimensions === undefined) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `${join(folder, 'config.json')} has no numeric hidden_size; set settings.dimensions.`,
    });
  }

  let transformers: TransformersModule;
  try {
    transformers = await (resolved.loadTransformers ?? importTransformers)();
  } catch (error) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `Cannot load ${TRANSFORMERS_PACKAGE} (${(error as Error).message}). Install it next to @agentflow/memory to use local feature extraction.`,
      cause: error,
    });
  }
  transformers.env.allowRemoteModels = false;
  transformers.env.localModelPath = `${modelRoot}/`;
  const extractor = await transformers.pipeline('feature-extraction', resolved.model, {
    dtype: resolved.dtype,
    local_files_only: true,
  });
  const source = `The transformers.js model ${resolved.model}`;
  return {
    dimensions,
    embed: (texts) =>
      embedInBatches(texts, resolved.batchSize, async (batch) => {
        const output = await extractor(batch, { pooling: resolved.pooling, normalize: resolved.normalize });
        return checkEmbeddings(output.tolist(), batch.length, dimensions, source);
      }),
  };
}
