// Model shapes the benchmarks compare at, by name:
//   25m   the small Qwen3 of bench/pytorch-compare.mjs (hidden 512, 8 layers, 8 heads / 4 kv heads,
//         head_dim 64, intermediate 1536, vocabulary 4096, tied head: 25.4M parameters)
//   0.6b  Qwen/Qwen3-0.6B's config.json (the qwen3-0.6b-shape preset)
//   world the default's world planner (configs/default.yaml: hidden 128, 2 layers, 4 heads of 32,
//         intermediate 256, its learned vocabulary of about 963 tokens)
import { getModelPreset } from '../dist/index.js';

export const BENCH_SHAPES = {
  '25m': {
    ...getModelPreset('tiny'),
    vocabSize: 4096,
    hiddenSize: 512,
    intermediateSize: 1536,
    numHiddenLayers: 8,
    numAttentionHeads: 8,
    numKeyValueHeads: 4,
    headDim: 64,
    ropeTheta: 1000000,
    tieWordEmbeddings: true,
    eosTokenIds: [1],
  },
  '0.6b': getModelPreset('qwen3-0.6b-shape'),
  world: {
    ...getModelPreset('tiny'),
    vocabSize: 963,
    hiddenSize: 128,
    intermediateSize: 256,
    numHiddenLayers: 2,
    numAttentionHeads: 4,
    numKeyValueHeads: 4,
    headDim: 32,
    ropeTheta: 10000,
    eosTokenIds: [1],
  },
};
