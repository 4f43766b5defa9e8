// Blocked against full attention in a LoRA training step at the Qwen3-0.6B shape (issue #32):
// peak resident memory of one training step per setting, each in a fresh child process (as
// memory-bench.mjs measures), and the time of a step. The step is rank-8 LoRA on every linear
// module with recomputed layers, one row of `length` tokens whose last `completion` tokens are
// scored (the LM head's [completion, vocab] tensors stay the same size at every length, so the
// growth is the layers' and attention's).
// Kinds: `full` (unblocked attention), `blocked` (attention in query blocks, the default) and
// `rows` (blocked attention, and each layer's norms, projections, RoPE and MLP in blocks of
// `--row-block` rows, default the attention block: TrainingGraphSettings.rowBlocks).
// `--layers 4,8` measures at several depths and fits peak = a + b x layers for each attention and
// length (the peak is linear in the depth: each layer adds its weights and its kept residual
// stream, while attention's working set is one layer's, or one block's), then gives the peaks at
// the preset's own depth (`--extrapolate-to`, default its layer count) beside the measured ones.
// `--attention-only` instead measures one attention layer alone at the shape's heads (forward and
// the query, key and value gradients, no model), each setting in a fresh process.
// `--speed 1024` instead times the step at that length, two kinds (default blocked and full) alternately in one
// process (after one untimed step each), so both see the same load on a shared machine.
// Usage: node bench/attention-bench.mjs [--lengths 1024,4096] [--kinds blocked,full] [--layers 28 | 4,8]
//        [--completion 64] [--block 256] [--row-block 256] [--preset qwen3-0.6b-shape] [--extrapolate-to 28]
//        | --speed 1024 [--rounds 3] [--layers 4] [--block 256] [--kinds blocked,full] | --attention-only [--lengths ...]
// Child mode (one setting, JSON on stdout): --child --kind blocked --length 4096 --layers 4 ...
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createGraphBuilder, createHostTensor, createRuntime } from '@agentflow/tensor';
import { createLoraAdapter, createPolicyTrainer, createRandomModel, DEFAULT_ATTENTION_BLOCK_SIZE, getModelPreset, loraLayoutOf, nllObjective } from '../dist/index.js';

const args = {};
process.argv.slice(2).forEach((value, index, all) => {
  if (value.startsWith('--')) args[value.slice(2)] = all[index + 1]?.startsWith('--') === false ? all[index + 1] : 'true';
});
const preset = args.preset ?? 'qwen3-0.6b-shape';
const layerCounts = String(args.layers ?? getModelPreset(preset).numHiddenLayers).split(',').map(Number);
const layers = layerCounts[0];
const completion = Number(args.completion ?? 64);
const blockSize = Number(args.block ?? DEFAULT_ATTENTION_BLOCK_SIZE);
const rowBlockSize = Number(args['row-block'] ?? blockSize);
// `--arena false` turns ONNX Runtime's CPU memory arena off (RuntimeSettings.cpuMemoryArena).
const arena = args.arena !== 'false';
const mib = (bytes) => (bytes / 2 ** 20).toFixed(0);

/** Resident and peak resident bytes of this process, from /proc. */
function memory() {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** One row of `length` tokens, the last `completion` scored, as a training batch. */
function trainingBatch(length) {
  const token = (k) => (k * 104729 + 7) % 50000;
  return {
    promptIds: [Array.from({ length: length - completion }, (_, k) => token(k))],
    completionIds: [Array.from({ length: completion }, (_, k) => token(length - completion + k))],
    tokenWeights: [Array.from({ length: completion }, () => 1 / completion)],
    objective: { kind: 'nll' },
  };
}

/** The model at the bench's shape, its adapter, and a trainer per attention kind. */
function setUp(kinds) {
  const config = { ...getModelPreset(preset), numHiddenLayers: layers };
  const model = createRandomModel(config, 1);
  const runtime = createRuntime({ device: 'cpu', cpuMemoryArena: arena });
  const adapter = createLoraAdapter(config, { rank: 8, alpha: 16 }, 2);
  const trainers = new Map(
    kinds.map((kind) => {
      const attention = kind === 'full' ? { kind: 'full' } : { kind: 'blocked', blockSize };
      const rowBlocks = kind === 'rows' ? { rowBlocks: { blockSize: rowBlockSize } } : {};
      return [kind, createPolicyTrainer({ model, lora: loraLayoutOf(config, adapter.config), runtime, objectives: [nllObjective], recompute: true, attention, ...rowBlocks })];
    }),
  );
  return { model, adapter, trainers };
}

if (args.child) {
  const { adapter, trainers } = setUp([args.kind]);
  const started = performance.now();
  const result = await trainers.get(args.kind).run(trainingBatch(Number(args.length)), adapter);
  const seconds = (performance.now() - started) / 1000;
  let squares = 0;
  for (const gradient of result.gradients.values()) for (const value of gradient) squares += value * value;
  console.log(JSON.stringify({ peak: memory().peak, seconds, loss: result.stats.loss, gradientNorm: Math.sqrt(squares) }));
  process.exit(0);
}

if (args['attention-child']) {
  // One attention layer: blocked or the unblocked formula, its output and the gradients of sum(output * seed).
  const config = getModelPreset(preset);
  const [kvHeads, groups, headDim] = [config.numKeyValueHeads, config.numAttentionHeads / config.numKeyValueHeads, config.headDim];
  const length = Number(args.length);
  const scale = headDim ** -0.5;
  const g = createGraphBuilder();
  const q = g.input('q', 'float32', [1, kvHeads, groups, 'sequence', headDim]);
  const k = g.input('k', 'float32', [1, kvHeads, 'total', headDim]);
  const v = g.input('v', 'float32', [1, kvHeads, 'total', headDim]);
  const mask = g.input('mask', 'int64', [1, 'total']);
  const seed = g.input('seed', 'float32', [1, kvHeads, groups, 'sequence', headDim]);
  let output;
  if (args.kind === 'blocked') output = g.blockedAttention(q, k, v, { blockSize, scale, causal: true, keyMask: mask });
  else {
    const index = g.range(0, g.reshape(g.shape(mask, 1, 2), []), 1, 'int64');
    const causal = g.not(g.greater(g.unsqueeze(index, [0]), g.unsqueeze(index, [1])));
    const visible = g.cast(g.and(g.cast(g.unsqueeze(mask, [1, 2, 3]), 'bool'), causal), 'float32');
    const scores = g.matmul(q, g.transpose(g.unsqueeze(k, [2]), [0, 1, 2, 4, 3]));
    output = g.matmul(g.softmax(g.add(g.mul(scores, scale), g.mul(g.sub(visible, 1), 1e9)), -1), g.unsqueeze(v, [2]));
  }
  const gradients = g.gradients(g.reduceSum(g.mul(output, seed), [0, 1, 2, 3, 4]), [q, k, v]);
  for (const [index, gradient] of gradients.entries()) g.output(gradient, `gradient.${index}`);
  const session = await createRuntime({ device: 'cpu' }).createSession(g.toBytes());
  const values = (shape) => createHostTensor('float32', shape, Array.from({ length: shape.reduce((a, b) => a * b) }, (_, n) => Math.sin(n)));
  const feeds = {
    q: values([1, kvHeads, groups, length, headDim]),
    k: values([1, kvHeads, length, headDim]),
    v: values([1, kvHeads, length, headDim]),
    mask: createHostTensor('int64', [1, length], Array(length).fill(1)),
    seed: values([1, kvHeads, groups, length, headDim]),
  };
  const before = memory();
  await session.run(feeds);
  console.log(JSON.stringify({ added: memory().peak - Math.max(before.peak, before.rss) }));
  process.exit(0);
}

if (args['attention-only']) {
  const lengths = (args.lengths ?? '1024,4096').split(',').map(Number);
  const config = getModelPreset(preset);
  console.log(`One attention layer of ${preset} (${config.numAttentionHeads} query heads over ${config.numKeyValueHeads} key/value heads, head ${config.headDim}), causal, forward and the query, key and value gradients; peak memory its run added over the inputs, each in a fresh process:`);
  console.log('');
  console.log(`| tokens | full MiB | blocked (${blockSize}-row blocks) MiB | full / blocked |`);
  console.log('|---:|---:|---:|---:|');
  for (const length of lengths) {
    const added = (kind) => {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--attention-child', 'true', '--kind', kind, '--length', String(length), '--block', String(blockSize), '--preset', preset], { encoding: 'utf8' });
      return JSON.parse(out.trim().split('\n').pop()).added;
    };
    const [full, blocked] = [added('full'), added('blocked')];
    console.log(`| ${length} | ${mib(full)} | ${mib(blocked)} | ${(full / blocked).toFixed(1)} |`);
  }
  process.exit(0);
}

if (args.speed) {
  const length = Number(args.speed);
  const rounds = Number(args.rounds ?? 3);
  const [first, second] = (args.kinds ?? 'blocked,full').split(',');
  const { adapter, trainers } = setUp([first, second]);
  const batch = trainingBatch(length);
  const times = { [first]: [], [second]: [] };
  for (let round = 0; round <= rounds; round++) {
    for (const kind of [first, second]) {
      const started = performance.now();
      await trainers.get(kind).run(batch, adapter);
      if (round > 0) times[kind].push((performance.now() - started) / 1000);
    }
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const label = { blocked: `blocked (${blockSize}-row blocks)`, full: 'full', rows: `rows (blocked, row-wise parts in ${rowBlockSize}-row blocks)` };
  console.log(`${preset} with ${layers} layers, ${length} tokens (1 row, last ${completion} scored), LoRA r=8 on every linear, layers recomputed; ${rounds} timed steps of each after one untimed, alternating. Load average at the end: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  console.log('');
  console.log('| attention | step s (each) | median s |');
  console.log('|---|---|---:|');
  for (const kind of [first, second]) console.log(`| ${label[kind]} | ${times[kind].map((t) => t.toFixed(1)).join(', ')} | ${median(times[kind]).toFixed(1)} |`);
  console.log('');
  console.log(`${first} / ${second} step time: ${(median(times[first]) / median(times[second])).toFixed(2)}`);
  process.exit(0);
}

const lengths = (args.lengths ?? '1024,4096').split(',').map(Number);
const kinds = (args.kinds ?? 'blocked,full').split(',');
const results = [];
for (const kind of kinds) {
  for (const length of lengths) {
    for (const depth of layerCounts) {
      const childArgs = [fileURLToPath(import.meta.url), '--child', '--kind', kind, '--length', String(length), '--layers', String(depth), '--completion', String(completion), '--block', String(blockSize), '--row-block', String(rowBlockSize), '--arena', String(arena), '--preset', preset];
      const out = execFileSync(process.execPath, childArgs, { encoding: 'utf8', maxBuffer: 1 << 24 });
      const result = { kind, length, layers: depth, ...JSON.parse(out.trim().split('\n').pop()) };
      results.push(result);
      console.error(`${kind} ${length} tokens, ${depth} layers: peak ${mib(result.peak)} MiB, step ${result.seconds.toFixed(1)} s (with the session's creation), loss ${result.loss}`);
    }
  }
}
console.log(`${preset}; LoRA r=8 on every linear, layers recomputed; 1 row, last ${completion} tokens scored; blocked = ${blockSize}-row query blocks; rows = blocked, and each layer's row-wise parts in ${rowBlockSize}-row blocks${arena ? '' : '; CPU memory arena off'}. Load average at the end: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
console.log('');
console.log(`| attention | tokens | layers | peak RSS MiB | peak / peak at ${lengths[0]} tokens | first step s (with the session) | loss | LoRA gradient norm |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const row of results) {
  const base = results.find((other) => other.kind === row.kind && other.length === lengths[0] && other.layers === row.layers);
  console.log(`| ${row.kind} | ${row.length} | ${row.layers} | ${mib(row.peak)} | ${(row.peak / base.peak).toFixed(2)} | ${row.seconds.toFixed(1)} | ${row.loss.toFixed(6)} | ${row.gradientNorm.toPrecision(6)} |`);
}
if (layerCounts.length > 1) {
  // Least squares of peak on layers, per attention and length.
  const depth = Number(args['extrapolate-to'] ?? getModelPreset(preset).numHiddenLayers);
  const fitted = (kind, length) => {
    const points = results.filter((row) => row.kind === kind && row.length === length);
    const meanX = points.reduce((sum, row) => sum + row.layers, 0) / points.length;
    const meanY = points.reduce((sum, row) => sum + row.peak, 0) / points.length;
    const slope = points.reduce((sum, row) => sum + (row.layers - meanX) * (row.peak - meanY), 0) / points.reduce((sum, row) => sum + (row.layers - meanX) ** 2, 0);
    return { perLayer: slope, peak: meanY + slope * (depth - meanX) };
  };
  console.log('');
  console.log(`Fitted peak = a + b x layers, at ${depth} layers:`);
  console.log('');
  console.log(`| attention | tokens | b: MiB per layer | peak at ${depth} layers MiB | / at ${lengths[0]} tokens |`);
  console.log('|---|---:|---:|---:|---:|');
  for (const kind of kinds) {
    for (const length of lengths) {
      const fit = fitted(kind, length);
      console.log(`| ${kind} | ${length} | ${mib(fit.perLayer)} | ${mib(fit.peak)} | ${(fit.peak / fitted(kind, lengths[0]).peak).toFixed(2)} |`);
    }
  }
}
