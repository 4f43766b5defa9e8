import { type Qwen3Config, type Qwen3LayerShape, qwen3HeadDim } from '../config/qwen3-config';
import { LINEAR_MODULES, linearShape } from '../weights/weight-names';

/**
 * Parameters of one decoder layer: its seven linear modules and its four norms (input,
 * post-attention, q and k). Takes a shape before it is a config (`headDim` absent is
 * hiddenSize / numAttentionHeads), e.g. to bound a model's size before creating it.
 */
export function layerParameterCount(shape: Qwen3LayerShape): number {
  const sizes = { ...shape, headDim: qwen3HeadDim(shape) };
  const linear = LINEAR_MODULES.reduce((sum, module) => {
    const [out, inputs] = linearShape(sizes, module);
    return sum + out * inputs;
  }, 0);
  return linear + 2 * sizes.hiddenSize + 2 * sizes.headDim;
}

/** Parameters of the model (the tied head counted once). */
export function parameterCount(config: Qwen3Config): number {
  const embedding = config.vocabSize * config.hiddenSize;
  return config.numHiddenLayers * layerParameterCount(config) + config.hiddenSize + embedding * (config.tieWordEmbeddings ? 1 : 2);
}
