import { createGraphBuilder, type GraphBuilder } from '@agentflow/tensor';
import type { DecoderConfig } from '../config/decoder-config';
import type { ModelWeights } from '../weights/weight-names';
import { buildDecoder, type LoraTensors, lmHead, logprobsAt, newKeyName, newValueName } from './decoder-graph';
import { declareLoraInputs, type LoraLayout } from './lora-inputs';

/** Graph names of the inference graph's extra input and outputs. */
export const TARGET_IDS = 'target_ids';
export const SCORED_POSITIONS = 'scored_positions';
export const LOGPROBS = 'logprobs';
export const ENTROPY = 'entropy';
export const LAST_LOGITS = 'last_logits';

/**
 * The one inference graph: a decoder with a fixed-capacity KV cache read in place (`cache_key.{l}` /
 * `cache_value.{l}` [batch, kvHeads, capacity, headDim]; capacity 0 for scoring and a first
 * prefill). The LM head runs at the scored positions and the last position only, so no
 * tensor is [batch, sequence, vocab]. Inputs beyond the decoder's: `target_ids` [batch, sequence]
 * (the next token at each position) and `scored_positions` int64 [batch, scored]. Outputs:
 * - `logprobs` [batch, scored]: log p(target_ids[b, p] | tokens up to p) at each scored position p;
 * - `entropy` [batch, scored]: entropy of the next-token distribution there;
 * - `last_logits` [batch, vocab]: logits at the last position (sampling);
 * - `new_key.{l}` / `new_value.{l}` [batch, kvHeads, sequence, headDim]: this run's keys and values,
 *   for the caller to write into its cache (the cache itself is never an output, so no step copies it).
 */
export function buildInferenceGraph(config: DecoderConfig, weights: ModelWeights, lora?: LoraLayout): GraphBuilder {
  const graph = createGraphBuilder({ name: 'qwen3-inference' });
  const loraTensors: Map<string, LoraTensors> | undefined = lora ? declareLoraInputs(graph, lora) : undefined;
  const decoder = buildDecoder(graph, config, weights, { kvCache: true, ...(loraTensors ? { lora: loraTensors } : {}) });
  const targets = graph.input(TARGET_IDS, 'int64', ['batch', 'sequence']);
  const positions = graph.input(SCORED_POSITIONS, 'int64', ['batch', 'scored']);
  const head = lmHead(graph, config, decoder);
  const { logSoftmax, logprobs } = logprobsAt(graph, config, decoder, targets, positions); // [batch, scored, vocab], [batch, scored]
  graph.output(logprobs, LOGPROBS);
  graph.output(graph.neg(graph.reduceSum(graph.mul(graph.exp(logSoftmax), logSoftmax), [-1])), ENTROPY);
  const lastHidden = graph.squeeze(graph.slice(decoder.hidden, { starts: [-1], ends: [Number.MAX_SAFE_INTEGER], axes: [1] }), [1]); // [batch, hidden]
  graph.output(head(lastHidden), LAST_LOGITS);
  decoder.newKeyValues.forEach(({ key, value }, layer) => {
    graph.output(key, newKeyName(layer));
    graph.output(value, newValueName(layer));
  });
  return graph;
}
