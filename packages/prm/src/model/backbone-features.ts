import { AgentFlowError } from '@agentflow/core';
import {
  buildDecoder,
  createGraphSession,
  declareLoraInputs,
  type LoraAdapter,
  type LoraLayout,
  loraFeeds,
  type Qwen3Config,
  type ModelWeights,
} from '@agentflow/models';
import { createGraphBuilder, type GraphBuilder, type HostTensor, type TensorRuntime, type TensorSession } from '@agentflow/tensor';

/** Graph names of the feature graph's own input and output. */
export const LAST_TOKEN = 'last_token';
export const FEATURES_OUTPUT = 'features';
/** Graph name of the extra head inputs of the LoRA training graph (confidence features). */
export const CONFIDENCE = 'confidence';

/**
 * The backbone as the PRM uses it: the final-norm hidden state of the last real token of
 * each row. `last_token` [batch, sequence] is one-hot at that position, so right padding
 * works and the selection is a product (differentiable, unlike an index).
 */
export function buildFeatureGraph(
  config: Qwen3Config,
  weights: ModelWeights,
  lora?: LoraLayout,
): { graph: GraphBuilder; weightNames: string[] } {
  const graph = createGraphBuilder({ name: 'prm-backbone' });
  const loraTensors = lora ? declareLoraInputs(graph, lora) : undefined;
  const decoder = buildDecoder(graph, config, weights, { kvCache: false, ...(loraTensors ? { lora: loraTensors } : {}) });
  const lastToken = graph.input(LAST_TOKEN, 'float32', ['batch', 'sequence']); // [batch, sequence]
  const selected = graph.mul(decoder.hidden, graph.unsqueeze(lastToken, [2])); // [batch, sequence, hidden]
  graph.output(graph.reduceSum(selected, [1]), FEATURES_OUTPUT); // [batch, hidden]
  return { graph, weightNames: [...decoder.weights.bound().keys()] };
}

/** Right-padded feeds for rows of token ids: ids, mask, positions, the one-hot last token. */
export function paddedFeeds(rows: readonly (readonly number[])[]): Record<string, HostTensor> {
  const batch = rows.length;
  const sequence = Math.max(...rows.map((row) => row.length));
  if (batch === 0 || sequence === 0) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'PRM inputs must be non-empty token sequences.' });
  }
  const ids = new BigInt64Array(batch * sequence);
  const mask = new BigInt64Array(batch * sequence);
  const positions = new BigInt64Array(batch * sequence);
  const last = new Float32Array(batch * sequence);
  rows.forEach((row, b) => {
    row.forEach((id, t) => {
      ids[b * sequence + t] = BigInt(id);
      mask[b * sequence + t] = 1n;
      positions[b * sequence + t] = BigInt(t);
    });
    last[b * sequence + row.length - 1] = 1;
  });
  const shape = [batch, sequence];
  return {
    input_ids: { dtype: 'int64', shape, data: ids },
    attention_mask: { dtype: 'int64', shape, data: mask },
    position_ids: { dtype: 'int64', shape, data: positions },
    [LAST_TOKEN]: { dtype: 'float32', shape, data: last },
  };
}

/** Runs the feature graph in batches. */
export interface FeatureExtractor {
  readonly hiddenSize: number;
  /** The backbone weights the PRM reads, by Hugging Face name (every one but an untied LM head). */
  readonly weightNames: readonly string[];
  /** [rows, hidden] row-major, in the order of `rows`. */
  features(rows: readonly (readonly number[])[], adapter?: LoraAdapter): Promise<Float32Array>;
  release(): Promise<void>;
}

/**
 * Creates the backbone session. Rows are sorted by length before batching so that each
 * batch pads little, and the features are put back in the caller's order. With `hostWeights`
 * the session reads the weights' arrays on every run, on CUDA too (tensor's
 * SessionSettings.hostWeights): what a backbone trained in place needs.
 */
export async function createFeatureExtractor(
  runtime: TensorRuntime,
  config: Qwen3Config,
  weights: ModelWeights,
  settings: { batchSize: number; lora?: LoraLayout; hostWeights?: boolean },
): Promise<FeatureExtractor> {
  const built = buildFeatureGraph(config, weights, settings.lora);
  const session: TensorSession = await createGraphSession(runtime, built.graph, 'prm-backbone', { hostWeights: settings.hostWeights ?? false });
  const hiddenSize = config.hiddenSize;
  return {
    hiddenSize,
    weightNames: built.weightNames,
    async features(rows, adapter) {
      const out = new Float32Array(rows.length * hiddenSize);
      const order = rows.map((_, index) => index).sort((a, b) => rows[a]!.length - rows[b]!.length);
      const extra = settings.lora && adapter ? loraFeeds(settings.lora, adapter) : {};
      if (settings.lora && !adapter) {
        throw new AgentFlowError({ code: 'INTERNAL', message: 'A LoRA backbone needs its adapter to compute features.' });
      }
      for (let start = 0; start < order.length; start += settings.batchSize) {
        const chunk = order.slice(start, start + settings.batchSize);
        const result = await session.run({ ...paddedFeeds(chunk.map((index) => rows[index]!)), ...extra }, [FEATURES_OUTPUT]);
        const data = result[FEATURES_OUTPUT]!.data as Float32Array; // [chunk, hidden]
        chunk.forEach((index, row) => {
          out.set(data.subarray(row * hiddenSize, (row + 1) * hiddenSize), index * hiddenSize);
        });
      }
      return out;
    },
    release: () => session.release(),
  };
}
