import { AgentFlowError, type Random } from '@agentflow/core';
import { createGraphBuilder, type GraphBuilder, type HostTensor, type SymbolicTensor, type TensorRuntime, type TensorSession } from '@agentflow/tensor';
import { type PrmLoss, prmLossGraph } from './prm-loss';

/** Graph names of the head graphs. */
export const FEATURES = 'features';
export const HEAD_WEIGHT = 'head.weight';
export const HEAD_BIAS = 'head.bias';
/** The hidden layer's weight [hidden, inputs] (a PyTorch `Linear(inputs, hidden)`'s layout) and bias [hidden]. */
export const HEAD_HIDDEN_WEIGHT = 'head.hidden.weight';
export const HEAD_HIDDEN_BIAS = 'head.hidden.bias';
/** A hidden layer reads its inputs standardised: (x - shift) * scale, each [inputs], fixed while it trains. */
export const HEAD_INPUT_SHIFT = 'head.input.shift';
export const HEAD_INPUT_SCALE = 'head.input.scale';
export const LABELS = 'labels';
export const SCORES = 'scores';
export const LOSS = 'loss';

/**
 * The head's shape: `inputs` values per row (the backbone's hidden state, then any confidence
 * features) and `hidden` units of a ReLU layer before the score, 0 for none (a linear head).
 */
export interface HeadLayout {
  inputs: number;
  hidden: number;
}

/**
 * The head's parameters, updated in place by the optimiser. `weight` and `bias` make the score:
 * `weight` has `inputs` values for a linear head, `hidden` with a hidden layer, which then
 * has `hiddenWeight` [hidden, inputs] row-major and `hiddenBias` [hidden], and reads its inputs
 * standardised by `inputShift` and `inputScale` [inputs] (set from the training rows by
 * `resetHead`, not trained): a confidence feature such as a log-likelihood spans tens of units
 * where a hidden state's values span one, and unstandardised, 2 of 23 heads of 32 units never
 * left the constant predictor (the trainer README).
 */
export interface HeadParameters {
  weight: Float32Array;
  bias: Float32Array; // [1]
  hiddenWeight?: Float32Array;
  hiddenBias?: Float32Array;
  inputShift?: Float32Array;
  inputScale?: Float32Array;
}

/** The layout a head's parameters have (for checks and for graphs built around them). */
export function headLayoutOf(parameters: HeadParameters): HeadLayout {
  const hidden = parameters.hiddenBias?.length ?? 0;
  return { inputs: hidden > 0 ? parameters.hiddenWeight!.length / hidden : parameters.weight.length, hidden };
}

/** Zeroed parameters of `layout` (call `resetHead` before training). */
export function createHeadParameters(layout: HeadLayout): HeadParameters {
  const width = layout.hidden > 0 ? layout.hidden : layout.inputs;
  return {
    weight: new Float32Array(width),
    bias: new Float32Array(1),
    ...(layout.hidden > 0
      ? {
          hiddenWeight: new Float32Array(layout.hidden * layout.inputs),
          hiddenBias: new Float32Array(layout.hidden),
          inputShift: new Float32Array(layout.inputs),
          inputScale: new Float32Array(layout.inputs).fill(1),
        }
      : {}),
  };
}

/**
 * The shift and scale that standardise each of `width` columns of the rows `rows` of `inputs`
 * (row-major; every row when `rows` is absent): the column's mean, and one over its standard
 * deviation (1 for a column that does not vary, so it passes through centred).
 */
export function inputStatistics(
  inputs: Float32Array,
  width: number,
  rows: readonly number[] = Array.from({ length: inputs.length / width }, (_, row) => row),
): { shift: Float32Array; scale: Float32Array } {
  const shift = new Float32Array(width);
  const scale = new Float32Array(width).fill(1);
  if (rows.length === 0) return { shift, scale };
  for (let column = 0; column < width; column++) {
    let sum = 0;
    for (const row of rows) sum += inputs[row * width + column]!;
    const mean = sum / rows.length;
    let squares = 0;
    for (const row of rows) squares += (inputs[row * width + column]! - mean) ** 2;
    const deviation = Math.sqrt(squares / rows.length);
    shift[column] = mean;
    if (deviation > 1e-6) scale[column] = 1 / deviation;
  }
  return { shift, scale };
}

/**
 * Sets the head to the constant predictor of `labelMean`: score weight 0, bias = logit(mean).
 * A hidden layer gets PyTorch's `Linear` initialisation, uniform in ±1/sqrt(inputs) for its
 * weight and bias, drawn from `random`, and its inputs' standardisation from `statistics`
 * (`inputStatistics` of the training rows); with the score weight at 0 the scores are the constant's.
 */
export function resetHead(
  parameters: HeadParameters,
  labelMean: number,
  random?: Random,
  statistics?: { shift: Float32Array; scale: Float32Array },
): void {
  const clamped = Math.min(Math.max(labelMean, 1e-4), 1 - 1e-4);
  parameters.weight.fill(0);
  parameters.bias[0] = Math.log(clamped / (1 - clamped));
  const { hiddenWeight, hiddenBias } = parameters;
  if (hiddenWeight && hiddenBias) {
    if (!random || !statistics) {
      throw new AgentFlowError({ code: 'INTERNAL', message: "A PRM head with a hidden layer needs a random generator and its inputs' statistics to initialise it." });
    }
    parameters.inputShift!.set(statistics.shift);
    parameters.inputScale!.set(statistics.scale);
    const bound = 1 / Math.sqrt(headLayoutOf(parameters).inputs);
    for (let index = 0; index < hiddenWeight.length; index++) hiddenWeight[index] = (2 * random.next() - 1) * bound;
    for (let index = 0; index < hiddenBias.length; index++) hiddenBias[index] = (2 * random.next() - 1) * bound;
  }
}

/** The head's trainable arrays by graph name (their gradients are the graph's `grad.<name>` outputs). */
export function headArrays(parameters: HeadParameters): Record<string, Float32Array> {
  return {
    [HEAD_WEIGHT]: parameters.weight,
    [HEAD_BIAS]: parameters.bias,
    ...(parameters.hiddenWeight && parameters.hiddenBias ? { [HEAD_HIDDEN_WEIGHT]: parameters.hiddenWeight, [HEAD_HIDDEN_BIAS]: parameters.hiddenBias } : {}),
  };
}

/** Whether weight decay applies to a head array: the weights, not the biases. */
export const headDecays = (name: string) => name === HEAD_WEIGHT || name === HEAD_HIDDEN_WEIGHT;

/** The feeds of the head's parameters in a graph from `declareHead`. */
export function headFeeds(parameters: HeadParameters): Record<string, HostTensor> {
  const { inputs, hidden } = headLayoutOf(parameters);
  return {
    [HEAD_WEIGHT]: { dtype: 'float32', shape: [hidden > 0 ? hidden : inputs, 1], data: parameters.weight },
    [HEAD_BIAS]: { dtype: 'float32', shape: [1], data: parameters.bias },
    ...(hidden > 0
      ? {
          [HEAD_HIDDEN_WEIGHT]: { dtype: 'float32', shape: [hidden, inputs], data: parameters.hiddenWeight! },
          [HEAD_HIDDEN_BIAS]: { dtype: 'float32', shape: [hidden], data: parameters.hiddenBias! },
          [HEAD_INPUT_SHIFT]: { dtype: 'float32', shape: [inputs], data: parameters.inputShift! },
          [HEAD_INPUT_SCALE]: { dtype: 'float32', shape: [inputs], data: parameters.inputScale! },
        }
      : {}),
  } as Record<string, HostTensor>;
}

/**
 * Declares the head's parameters as inputs of `graph` and returns its scores for `features`
 * [batch, inputs]: sigmoid(relu(((features - shift) * scale) · hiddenWeightᵀ + hiddenBias) ·
 * weight + bias), or sigmoid(features · weight + bias) without a hidden layer; `parameters`
 * lists the trained inputs by name (the shift and scale are inputs too, but fixed).
 */
export function declareHead(
  graph: GraphBuilder,
  features: SymbolicTensor,
  layout: HeadLayout,
): { scores: SymbolicTensor; parameters: (readonly [string, SymbolicTensor])[] } {
  const parameters: (readonly [string, SymbolicTensor])[] = [];
  let input = features; // [batch, inputs]
  if (layout.hidden > 0) {
    const hiddenWeight = graph.input(HEAD_HIDDEN_WEIGHT, 'float32', [layout.hidden, layout.inputs]);
    const hiddenBias = graph.input(HEAD_HIDDEN_BIAS, 'float32', [layout.hidden]);
    const shift = graph.input(HEAD_INPUT_SHIFT, 'float32', [layout.inputs]);
    const scale = graph.input(HEAD_INPUT_SCALE, 'float32', [layout.inputs]);
    const standardised = graph.mul(graph.sub(features, shift), scale); // [batch, inputs]
    input = graph.max(graph.add(graph.matmul(standardised, graph.transpose(hiddenWeight, [1, 0])), hiddenBias), 0); // [batch, hidden]
    parameters.push([HEAD_HIDDEN_WEIGHT, hiddenWeight], [HEAD_HIDDEN_BIAS, hiddenBias]);
  }
  const weight = graph.input(HEAD_WEIGHT, 'float32', [layout.hidden > 0 ? layout.hidden : layout.inputs, 1]);
  const bias = graph.input(HEAD_BIAS, 'float32', [1]);
  const logits = graph.squeeze(graph.add(graph.matmul(input, weight), bias), [1]); // [batch]
  parameters.unshift([HEAD_WEIGHT, weight], [HEAD_BIAS, bias]);
  return { scores: graph.sigmoid(logits), parameters };
}

/**
 * The regression head on features: one score per row. With `loss`, the graph also takes
 * `labels` [batch] and returns the mean loss and its gradients with respect to each parameter
 * (`grad.head.weight`, `grad.head.bias`, and the hidden layer's).
 */
export function buildHeadGraph(layout: HeadLayout, loss?: PrmLoss): Uint8Array {
  const graph = createGraphBuilder({ name: loss ? `prm-head-train-${loss}` : 'prm-head' });
  const features = graph.input(FEATURES, 'float32', ['batch', layout.inputs]); // [batch, inputs]
  const { scores, parameters } = declareHead(graph, features, layout);
  graph.output(scores, SCORES);
  if (loss) {
    const labels = graph.input(LABELS, 'float32', ['batch']); // [batch]
    const mean = prmLossGraph(graph, scores, labels, loss); // []
    graph.output(mean, LOSS);
    graph.gradients(
      mean,
      parameters.map(([, tensor]) => tensor),
    ).forEach((gradient, index) => {
      graph.output(gradient, `grad.${parameters[index]![0]}`);
    });
  }
  return graph.toBytes();
}

/** Sessions of the head: scoring, and training with one loss. */
export interface HeadSessions {
  readonly layout: HeadLayout;
  score(features: Float32Array, parameters: HeadParameters): Promise<Float32Array>;
  /** The batch's mean loss and its gradients by graph name (`headArrays`' names). */
  lossAndGradients(
    features: Float32Array,
    labels: Float32Array,
    parameters: HeadParameters,
  ): Promise<{ loss: number; gradients: Record<string, Float32Array> }>;
  release(): Promise<void>;
}

/** Creates the head's ONNX Runtime sessions (the training one only when a loss is given). */
export async function createHeadSessions(runtime: TensorRuntime, layout: HeadLayout, loss?: PrmLoss): Promise<HeadSessions> {
  const scoring = await runtime.createSession(buildHeadGraph(layout), { name: 'prm-head' });
  const training: TensorSession | undefined = loss
    ? await runtime.createSession(buildHeadGraph(layout, loss), { name: `prm-head-train-${loss}` })
    : undefined;
  const feeds = (features: Float32Array, parameters: HeadParameters): Record<string, HostTensor> => {
    if (features.length % layout.inputs !== 0) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `PRM features of length ${features.length} are not rows of the head's ${layout.inputs} inputs.`,
      });
    }
    return {
      [FEATURES]: { dtype: 'float32', shape: [features.length / layout.inputs, layout.inputs], data: features },
      ...headFeeds(parameters),
    };
  };
  return {
    layout,
    async score(features, parameters) {
      if (features.length === 0) return new Float32Array(0);
      const out = await scoring.run(feeds(features, parameters), [SCORES]);
      return out[SCORES]!.data as Float32Array;
    },
    async lossAndGradients(features, labels, parameters) {
      if (!training) {
        throw new AgentFlowError({ code: 'INTERNAL', message: 'The PRM head was created without a training session.' });
      }
      const names = Object.keys(headArrays(parameters));
      const out = await training.run(
        { ...feeds(features, parameters), [LABELS]: { dtype: 'float32', shape: [labels.length], data: labels } },
        [LOSS, ...names.map((name) => `grad.${name}`)],
      );
      return {
        loss: Number(out[LOSS]!.data[0]),
        gradients: Object.fromEntries(names.map((name) => [name, out[`grad.${name}`]!.data as Float32Array])),
      };
    },
    async release() {
      await scoring.release();
      await training?.release();
    },
  };
}
