import type { GraphBuilder, HostTensor } from '@agentflow/tensor';
import { AgentFlowError } from '@agentflow/core';
import type { DecoderConfig } from '../config/decoder-config';
import { type LoraAdapter, type LoraConfig, loraScale, loraTargets } from '../lora/lora-adapter';
import { peftKey } from '../lora/peft-format';
import { linearShape } from '../weights/weight-names';
import type { LoraTensors } from './decoder-graph';

/** Which modules have adapters, their shapes and scale: fixed when a graph is built. */
export interface LoraLayout {
  rank: number;
  scale: number;
  /** [path, inFeatures, outFeatures] in a stable order. */
  modules: { path: string; inFeatures: number; outFeatures: number }[];
}

/** Graph input names of one module's matrices. */
export const loraInputName = (path: string, matrix: 'A' | 'B') => `lora.${path}.${matrix}`;

/** Declares `lora.{path}.A` [rank, in] and `lora.{path}.B` [out, rank] inputs for every module. */
export function declareLoraInputs(graph: GraphBuilder, layout: LoraLayout): Map<string, LoraTensors> {
  const tensors = new Map<string, LoraTensors>();
  for (const { path, inFeatures, outFeatures } of layout.modules) {
    tensors.set(path, {
      a: graph.input(loraInputName(path, 'A'), 'float32', [layout.rank, inFeatures]),
      b: graph.input(loraInputName(path, 'B'), 'float32', [outFeatures, layout.rank]),
      scale: layout.scale,
    });
  }
  return tensors;
}

/** Feeds for the LoRA inputs from an adapter with the same layout. */
export function loraFeeds(layout: LoraLayout, adapter: LoraAdapter): Record<string, HostTensor> {
  const feeds: Record<string, HostTensor> = {};
  if (Math.abs(loraScale(adapter.config) - layout.scale) > 1e-12 * Math.abs(layout.scale)) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `The LoRA adapter's scale ${loraScale(adapter.config)} differs from the session's ${layout.scale} (alpha/rank are fixed when the session is built).`,
    });
  }
  for (const { path, inFeatures, outFeatures } of layout.modules) {
    const matrices = adapter.matrices.get(path);
    if (!matrices || matrices.a.length !== layout.rank * inFeatures || matrices.b.length !== outFeatures * layout.rank) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `The LoRA adapter does not match the session's layout at ${path} (rank ${layout.rank}, modules fixed when the session was built).`,
        details: { path, rank: layout.rank },
      });
    }
    feeds[loraInputName(path, 'A')] = { dtype: 'float32', shape: [layout.rank, inFeatures], data: matrices.a };
    feeds[loraInputName(path, 'B')] = { dtype: 'float32', shape: [outFeatures, layout.rank], data: matrices.b };
  }
  return feeds;
}

/** The layout of adapters with `config` on a model with `modelConfig`. */
export function loraLayoutOf(modelConfig: DecoderConfig, config: LoraConfig): LoraLayout {
  return {
    rank: config.rank,
    scale: loraScale(config),
    modules: loraTargets(modelConfig, config).map(({ path, module }) => {
      const [outFeatures, inFeatures] = linearShape(modelConfig, module);
      return { path, inFeatures, outFeatures };
    }),
  };
}

/**
 * A training step's LoRA gradients, which a graph returns by input name (`PolicyTrainer.run`),
 * by PEFT key instead (`base_model.model.{path}.lora_A.weight`, as `saveLoraAdapter` names the
 * matrices), in the adapter's module order; the arrays are shared, not copied. Throws
 * NOT_FOUND when `gradients` lacks a matrix of the adapter.
 */
export function peftGradients(adapter: LoraAdapter, gradients: ReadonlyMap<string, Float32Array>): Map<string, Float32Array> {
  const byKey = new Map<string, Float32Array>();
  for (const path of adapter.matrices.keys()) {
    for (const matrix of ['A', 'B'] as const) {
      const gradient = gradients.get(loraInputName(path, matrix));
      if (!gradient) {
        throw new AgentFlowError({
          code: 'NOT_FOUND',
          message: `No gradient for ${peftKey(path, matrix)}: the gradients come from a training graph built for another adapter layout; build it with loraLayoutOf(model.config, adapter.config).`,
          details: { path, matrix },
        });
      }
      byKey.set(peftKey(path, matrix), gradient);
    }
  }
  return byKey;
}
