import { createGraphBuilder, type GraphBuilder } from '@agentflow/tensor';
import type { Qwen3Config } from '../config/qwen3-config';
import type { ModelWeights } from '../weights/weight-names';
import { buildDecoder, type LoraTensors, lmHead, presentKeyName, presentValueName } from './decoder-graph';
import { declareLoraInputs, type LoraLayout } from './lora-inputs';

/** Graph names of the inference graph's extra input and outputs. */
export const TARGET_IDS = 'target_ids';
export const LOGPROBS = 'logprobs';
export const ENTROPY = 'entropy';
export const LAST_LOGITS = 'last_logits';

/**
 * The one inference graph: a KV-cached decoder whose past length may be 0 (prefill, scoring) or
 * more (decode). Outputs:
 * - `logprobs` [batch, sequence]: log p(target_ids[b, t] | tokens up to t);
 * - `entropy` [batch, sequence]: entropy of the next-token distribution at t;
 * - `last_logits` [batch, vocab]: logits at the last position (sampling);
 * - `present_key.{l}` / `present_value.{l}` [batch, kvHeads, total, headDim].
 */
export function buildInferenceGraph(config: Qwen3Config, weights: ModelWeights, lora?: LoraLayout): GraphBuilder {
  const graph = createGraphBuilder({ name: 'qwen3-inference' });
  const loraTensors: Map<string, LoraTensors> | undefined = lora ? declareLoraInputs(graph, lora) : undefined;
  const decoder = buildDecoder(graph, config, weights, { kvCache: true, ...(loraTensors ? { lora: loraTensors } : {}) });
  const targets = graph.input(TARGET_IDS, 'int64', ['batch', 'sequence']);
  const logits = lmHead(graph, config, decoder)(decoder.hidden); // [batch, sequence, vocab]
  const logSoftmax = graph.logSoftmax(logits, -1);
  const picked = graph.squeeze(graph.gatherElements(logSoftmax, graph.unsqueeze(targets, [2]), 2), [2]); // [batch, sequence]
  graph.output(picked, LOGPROBS);
  graph.output(graph.neg(graph.reduceSum(graph.mul(graph.exp(logSoftmax), logSoftmax), [-1])), ENTROPY);
  const last = graph.squeeze(graph.slice(logits, { starts: [-1], ends: [Number.MAX_SAFE_INTEGER], axes: [1] }), [1]);
  graph.output(last, LAST_LOGITS);
  decoder.presents.forEach(({ key, value }, layer) => {
    graph.output(key, presentKeyName(layer));
    graph.output(value, presentValueName(layer));
  });
  return graph;
}
