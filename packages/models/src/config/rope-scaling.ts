import { AgentFlowError, describeValue, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { DECODER_BOUNDS } from './decoder-shape';

/**
 * How the rotary embedding's frequencies are scaled (config.json's `rope_scaling`, or transformers
 * 5's `rope_parameters`), as transformers' `ROPE_INIT_FUNCTIONS` compute them:
 * - `default`: inv_freq_i = theta^(-2i/d), no scaling;
 * - `linear`: every frequency divided by `factor` (positions interpolated);
 * - `llama3` (Llama 3.1 and later): wavelengths 2 pi / inv_freq shorter than
 *   originalMaxPositionEmbeddings / highFreqFactor kept, longer than
 *   originalMaxPositionEmbeddings / lowFreqFactor divided by `factor`, and those between blended
 *   linearly in originalMaxPositionEmbeddings / wavelength (`_compute_llama3_parameters`).
 * `dynamic` (frequencies that change with the sequence length, which a KV cache computed at an
 * earlier length does not follow) and `yarn`, `longrope` are refused.
 */
export type RopeScaling =
  | { type: 'default' }
  | { type: 'linear'; factor: number }
  | { type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositionEmbeddings: number };

/** RoPE types that load. */
export const SUPPORTED_ROPE_TYPES = ['default', 'linear', 'llama3'] as const;

const factor = z.number().min(1).max(DECODER_BOUNDS.ropeFactor).describe('Scaling factor: the context is stretched this many times (>= 1).');

const linearSchema = z.object({ factor });

const llama3Schema = z
  .object({
    factor,
    low_freq_factor: z.number().positive().max(DECODER_BOUNDS.ropeFactor).describe('Wavelengths above original / low_freq_factor are divided by factor (Llama 3.1: 1).'),
    high_freq_factor: z.number().positive().max(DECODER_BOUNDS.ropeFactor).describe('Wavelengths below original / high_freq_factor are kept (Llama 3.1: 4).'),
    original_max_position_embeddings: z
      .number()
      .int()
      .positive()
      .max(DECODER_BOUNDS.maxPositionEmbeddings)
      .describe('The context length the model was pretrained at (Llama 3.1: 8192).'),
  })
  .refine((value) => value.high_freq_factor > value.low_freq_factor, {
    message: 'high_freq_factor must be greater than low_freq_factor (the blend divides by their difference)',
    path: ['high_freq_factor'],
  });

function invalid(message: string, details: Record<string, unknown>): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_CONFIG', message, details });
}

/** The RoPE type a `rope_scaling` / `rope_parameters` object names (`rope_type`, or the older `type`); absent is default. */
export function ropeTypeOf(raw: Readonly<Record<string, unknown>> | null | undefined): string {
  const type = raw ? (raw.rope_type ?? raw.type ?? 'default') : 'default';
  return typeof type === 'string' ? type : describeValue(type);
}

/**
 * Reads one `rope_scaling` (or `rope_parameters`) object of a config.json; `key` and `source` name
 * it in errors. An unsupported type is INVALID_CONFIG naming it and the supported ones.
 */
export function parseRopeScaling(raw: Readonly<Record<string, unknown>> | null | undefined, key: string, source: string): RopeScaling {
  const type = ropeTypeOf(raw);
  const parse = <T>(schema: z.ZodType<T>): T => {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw invalid(`${source}: ${formatZodIssues(parsed.error, key).join('; ')}.`, { source, key, ropeType: type });
    return parsed.data;
  };
  switch (type) {
    case 'default':
      return { type: 'default' };
    case 'linear':
      return { type: 'linear', factor: parse(linearSchema).factor };
    case 'llama3': {
      const value = parse(llama3Schema);
      return {
        type: 'llama3',
        factor: value.factor,
        lowFreqFactor: value.low_freq_factor,
        highFreqFactor: value.high_freq_factor,
        originalMaxPositionEmbeddings: value.original_max_position_embeddings,
      };
    }
    default: {
      const why = type === 'dynamic' ? ' ("dynamic" changes the frequencies with the sequence length, which a KV cache computed at an earlier length does not follow)' : '';
      throw invalid(
        `${source}: ${key}.rope_type ${JSON.stringify(type)} is not supported${why}; supported: ${SUPPORTED_ROPE_TYPES.map((name) => JSON.stringify(name)).join(', ')}.`,
        { source, key, ropeType: type },
      );
    }
  }
}

/** config.json's `rope_scaling` for a scaling: null for default, else the object transformers reads. */
export function ropeScalingJson(scaling: RopeScaling): Record<string, unknown> | null {
  switch (scaling.type) {
    case 'default':
      return null;
    case 'linear':
      return { rope_type: 'linear', factor: scaling.factor };
    case 'llama3':
      return {
        rope_type: 'llama3',
        factor: scaling.factor,
        low_freq_factor: scaling.lowFreqFactor,
        high_freq_factor: scaling.highFreqFactor,
        original_max_position_embeddings: scaling.originalMaxPositionEmbeddings,
      };
  }
}

/**
 * The rotary embedding's inverse frequencies (headDim / 2 of them, float64): theta^(-2i/headDim)
 * scaled as `scaling` says. The one definition the graph and the float64 reference both use;
 * bench/pytorch_qwen3.py computes it independently, from transformers' functions.
 */
export function ropeInverseFrequencies(theta: number, headDim: number, scaling: RopeScaling): Float64Array {
  const inverse = new Float64Array(headDim / 2).map((_, index) => 1 / theta ** ((2 * index) / headDim));
  switch (scaling.type) {
    case 'default':
      return inverse;
    case 'linear':
      return inverse.map((value) => value / scaling.factor);
    case 'llama3': {
      const { factor: stretch, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings: original } = scaling;
      const lowFrequencyWavelength = original / lowFreqFactor;
      const highFrequencyWavelength = original / highFreqFactor;
      return inverse.map((value) => {
        const wavelength = (2 * Math.PI) / value;
        if (wavelength < highFrequencyWavelength) return value; // high frequencies: kept
        if (wavelength > lowFrequencyWavelength) return value / stretch; // low frequencies: interpolated
        const smooth = (original / wavelength - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
        return (1 - smooth) * (value / stretch) + smooth * value;
      });
    }
  }
}
