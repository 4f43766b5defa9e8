import { createRandom, AgentFlowError } from '@agentflow/core';
import {
  createGraphBuilder,
  type HostTensor,
  readSafetensors,
  type TensorRuntime,
  type TensorSession,
  writeSafetensors,
} from '@agentflow/tensor';
import type { DecoderConfig } from '../config/decoder-config';
import { packScoringBatch } from '../engine/batch-packing';
import { createGraphSession } from '../engine/session-loader';
import { ATTENTION_MASK, buildDecoder, hiddenAt, INPUT_IDS, POSITION_IDS } from '../graph/decoder-graph';
import { declareLoraInputs, type LoraLayout, loraFeeds, loraInputName } from '../graph/lora-inputs';
import type { LoraAdapter } from '../lora/lora-adapter';
import type { DecoderModel } from '../weights/random-model';

/** A linear regression head on the final hidden state: score = h . weight + bias. */
export interface ScalarHead {
  weight: Float32Array; // [hidden]
  bias: Float32Array; // [1]
}

/** Token sequences and the positions whose hidden states are scored (e.g. each step's last token). */
export interface ScalarHeadBatch {
  inputIds: number[][];
  positions: number[][];
}

/** A scoring batch with regression targets and per-position loss weights (0 on padding). */
export interface ScalarHeadTrainingBatch extends ScalarHeadBatch {
  targets: number[][];
  weights: number[][];
}

/** Loss = sum(weights * (score - target)^2), with gradients of the head and of the adapter. */
export interface ScalarHeadGradients {
  loss: number;
  head: ScalarHead;
  /** By LoRA input name (`lora.{path}.A` / `.B`); empty without LoRA. */
  lora: Map<string, Float32Array>;
}

export interface ScalarHeadModel {
  score(batch: ScalarHeadBatch, head: ScalarHead, adapter?: LoraAdapter): Promise<number[][]>;
  gradients(batch: ScalarHeadTrainingBatch, head: ScalarHead, adapter?: LoraAdapter): Promise<ScalarHeadGradients>;
  release(): Promise<void>;
}

export interface ScalarHeadModelSettings {
  model: DecoderModel;
  runtime: TensorRuntime;
  lora?: LoraLayout;
}

/** A head with weights ~ normal(0, initializer_range) and zero bias. */
export function createScalarHead(config: DecoderConfig, seed = 0): ScalarHead {
  const random = createRandom(seed);
  return {
    weight: new Float32Array(config.hiddenSize).map(() => config.initializerRange * random.normal()),
    bias: new Float32Array(1),
  };
}

/** Saves the head as `score.weight` [1, hidden] (HF's *ForSequenceClassification name) and `score.bias` [1]. */
export async function saveScalarHead(path: string, head: ScalarHead): Promise<void> {
  await writeSafetensors(path, {
    'score.weight': { dtype: 'float32', shape: [1, head.weight.length], data: head.weight },
    'score.bias': { dtype: 'float32', shape: [1], data: head.bias },
  });
}

export async function loadScalarHead(path: string, config: DecoderConfig): Promise<ScalarHead> {
  const { tensors } = await readSafetensors(path, undefined, { as: 'float32' });
  const weight = tensors['score.weight'];
  if (!weight || weight.data.length !== config.hiddenSize) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `${path} needs score.weight with ${config.hiddenSize} values (the model's hidden size).`,
      details: { path },
    });
  }
  return { weight: weight.data as Float32Array, bias: (tensors['score.bias']?.data as Float32Array | undefined) ?? new Float32Array(1) };
}

const HEAD_WEIGHT = 'head.weight';
const HEAD_BIAS = 'head.bias';
const HEAD_POSITIONS = 'head_positions';
const HEAD_TARGETS = 'head_targets';
const HEAD_LOSS_WEIGHTS = 'head_loss_weights';

function buildHeadGraph(model: DecoderModel, lora: LoraLayout | undefined, training: boolean) {
  const graph = createGraphBuilder({ name: training ? 'qwen3-scalar-head-training' : 'qwen3-scalar-head' });
  const loraTensors = lora ? declareLoraInputs(graph, lora) : undefined;
  const decoder = buildDecoder(graph, model.config, model.weights, { kvCache: false, ...(loraTensors ? { lora: loraTensors } : {}) });
  const hiddenSize = model.config.hiddenSize;
  const weight = graph.input(HEAD_WEIGHT, 'float32', [hiddenSize]);
  const bias = graph.input(HEAD_BIAS, 'float32', [1]);
  const positions = graph.input(HEAD_POSITIONS, 'int64', ['batch', 'scored']);
  const selected = hiddenAt(graph, model.config, decoder, positions); // [batch, scored, hidden]
  const scores = graph.add(graph.squeeze(graph.matmul(selected, graph.unsqueeze(weight, [1])), [2]), bias); // [batch, scored]
  graph.output(scores, 'scores');
  const gradientNames: string[] = [];
  if (training) {
    const targets = graph.input(HEAD_TARGETS, 'float32', ['batch', 'scored']);
    const weights = graph.input(HEAD_LOSS_WEIGHTS, 'float32', ['batch', 'scored']);
    const error = graph.sub(scores, targets);
    const loss = graph.reduceSum(graph.mul(weights, graph.mul(error, error)), [0, 1]);
    graph.output(loss, 'loss');
    const wrt: [string, ReturnType<typeof graph.input>][] = [
      [HEAD_WEIGHT, weight],
      [HEAD_BIAS, bias],
      ...[...(loraTensors ?? new Map()).entries()].flatMap(([path, tensors]) => [
        [loraInputName(path, 'A'), tensors.a] as [string, typeof weight],
        [loraInputName(path, 'B'), tensors.b] as [string, typeof weight],
      ]),
    ];
    graph.gradients(loss, wrt.map(([, tensor]) => tensor)).forEach((gradient, position) => {
      graph.output(gradient, `grad.${wrt[position]![0]}`);
      gradientNames.push(wrt[position]![0]);
    });
  }
  return { graph, gradientNames };
}

/**
 * The PRM's model: the decoder of any supported family (optionally with LoRA inputs) and a scalar head fed as graph
 * inputs, scoring the hidden states at chosen positions; a second graph adds an MSE loss and its
 * gradients with respect to the head and the adapter.
 */
export function createScalarHeadModel(settings: ScalarHeadModelSettings): ScalarHeadModel {
  const { model, runtime, lora } = settings;
  let scoring: Promise<TensorSession> | undefined;
  let training: Promise<{ session: TensorSession; gradientNames: string[] }> | undefined;
  const feeds = (batch: ScalarHeadBatch, head: ScalarHead, adapter: LoraAdapter | undefined) => {
    const packed = packScoringBatch({ promptIds: batch.inputIds, completionIds: batch.inputIds.map(() => []) }, model.config.vocabSize);
    const width = Math.max(1, ...batch.positions.map((row) => row.length));
    const positions = new BigInt64Array(packed.batch * width);
    batch.positions.forEach((row, index) => {
      row.forEach((position, k) => {
        if (!Number.isInteger(position) || position < 0 || position >= batch.inputIds[index]!.length) {
          throw new AgentFlowError({
            code: 'INVALID_ARGUMENT',
            message: `Position ${position} of row ${index} is outside its ${batch.inputIds[index]!.length} tokens.`,
          });
        }
        positions[index * width + k] = BigInt(position);
      });
    });
    const result: Record<string, HostTensor> = {
      [INPUT_IDS]: packed.inputIds,
      [ATTENTION_MASK]: packed.attentionMask,
      [POSITION_IDS]: packed.positionIds,
      [HEAD_POSITIONS]: { dtype: 'int64', shape: [packed.batch, width], data: positions },
      [HEAD_WEIGHT]: { dtype: 'float32', shape: [model.config.hiddenSize], data: head.weight },
      [HEAD_BIAS]: { dtype: 'float32', shape: [1], data: head.bias },
    };
    if (lora) Object.assign(result, loraFeeds(lora, adapter ?? zeroAdapter(lora)));
    return { result, width };
  };
  const rows = (values: Float32Array, batch: ScalarHeadBatch, width: number) =>
    batch.positions.map((row, index) => row.map((_, k) => values[index * width + k]!));
  const matrix = (values: number[][], width: number): HostTensor<'float32'> => {
    const data = new Float32Array(values.length * width);
    values.forEach((row, index) => {
      data.set(row, index * width);
    });
    return { dtype: 'float32', shape: [values.length, width], data };
  };
  return {
    async score(batch, head, adapter) {
      scoring ??= createGraphSession(runtime, buildHeadGraph(model, lora, false).graph, 'qwen3-scalar-head');
      const { result, width } = feeds(batch, head, adapter);
      const outputs = await (await scoring).run(result, ['scores']);
      return rows(outputs.scores!.data as Float32Array, batch, width);
    },
    async gradients(batch, head, adapter) {
      training ??= (async () => {
        const built = buildHeadGraph(model, lora, true);
        return { session: await createGraphSession(runtime, built.graph, 'qwen3-scalar-head-training'), gradientNames: built.gradientNames };
      })();
      const { session, gradientNames } = await training;
      const { result, width } = feeds(batch, head, adapter);
      result[HEAD_TARGETS] = matrix(batch.targets, width);
      result[HEAD_LOSS_WEIGHTS] = matrix(batch.weights, width);
      const outputs = await session.run(result, ['loss', ...gradientNames.map((name) => `grad.${name}`)]);
      const gradient = (name: string) => outputs[`grad.${name}`]!.data as Float32Array;
      const loraGradients = new Map<string, Float32Array>();
      for (const name of gradientNames) if (name.startsWith('lora.')) loraGradients.set(name, gradient(name));
      return {
        loss: (outputs.loss!.data as Float32Array)[0]!,
        head: { weight: gradient(HEAD_WEIGHT), bias: gradient(HEAD_BIAS) },
        lora: loraGradients,
      };
    },
    async release() {
      if (scoring) await (await scoring).release();
      if (training) await (await training).session.release();
    },
  };
}

function zeroAdapter(layout: LoraLayout): LoraAdapter {
  const matrices = new Map(
    layout.modules.map(({ path, inFeatures, outFeatures }) => [
      path,
      { a: new Float32Array(layout.rank * inFeatures), b: new Float32Array(outFeatures * layout.rank), inFeatures, outFeatures },
    ]),
  );
  return { config: { rank: layout.rank, alpha: layout.scale * layout.rank, targetModules: [], useRslora: false }, matrices };
}
