import { biasedModules, type DecoderLayerFeatures, hasQueryKeyNorm } from '../config/decoder-architecture';
import type { DecoderConfig } from '../config/decoder-config';
import { type DecoderLayerShape, qwen3HeadDim } from '../config/decoder-shape';
import { LINEAR_MODULES, linearShape } from '../weights/weight-names';

/**
 * Parameters of one decoder layer: its seven linear modules, their biases where the family has
 * them (Qwen2's q/k/v; `attentionBias`, `mlpBias`), and its norms (input and post-attention, and
 * Qwen3's q and k). Takes a shape before it is a config (`headDim` absent is hiddenSize /
 * numAttentionHeads; `architecture` absent is qwen3), e.g. to bound a model's size before creating it.
 */
export function layerParameterCount(shape: DecoderLayerShape & DecoderLayerFeatures): number {
  const sizes = { ...shape, headDim: qwen3HeadDim(shape) };
  const linear = LINEAR_MODULES.reduce((sum, module) => {
    const [out, inputs] = linearShape(sizes, module);
    return sum + out * inputs;
  }, 0);
  const biases = biasedModules(shape).reduce((sum, module) => sum + linearShape(sizes, module)[0], 0);
  return linear + biases + 2 * sizes.hiddenSize + (hasQueryKeyNorm(shape) ? 2 * sizes.headDim : 0);
}

/** Parameters of the model (the tied head counted once). */
export function parameterCount(config: DecoderConfig): number {
  const embedding = config.vocabSize * config.hiddenSize;
  return config.numHiddenLayers * layerParameterCount(config) + config.hiddenSize + embedding * (config.tieWordEmbeddings ? 1 : 2);
}
