// Model shapes the benchmarks compare at, by name:
//   25m   the small Qwen3 of bench/pytorch-compare.mjs (hidden 512, 8 layers, 8 heads / 4 kv heads,
//         head_dim 64, intermediate 1536, vocabulary 4096, tied head: 25.4M parameters)
//   0.6b  Qwen/Qwen3-0.6B's config.json (the qwen3-0.6b-shape preset)
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
};
