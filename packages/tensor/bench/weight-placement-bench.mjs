// How a frozen weight reaches ONNX Runtime sessions, and what each way costs: RSS with N sessions
// over one 1 GiB weight held as an inline initializer, as in-memory external data, or as a feed.
// Usage: node bench/weight-placement-bench.mjs inline|external|feed [sessions=3] [disable_prepacking=1]
import ort from 'onnxruntime-node';
import onnxProto from 'onnx-proto';
import { readFileSync } from 'node:fs';
const P = onnxProto.onnx;
const mode = process.argv[2]; // inline | external | feed
const sessions = Number(process.argv[3] ?? 3);
const prepack = process.argv[4] ?? '1';
const rss = () => Math.round(Number(readFileSync('/proc/self/statm','utf8').split(' ')[1]) * 4096 / 2**20);
const IN = 4096, OUT = 65536; // 1 GiB f32 weight [OUT, IN]
const w = new Float32Array(IN * OUT); for (let i = 0; i < w.length; i += 1024) w[i] = 0.001;
console.log('weights', rss());
const vi = (name, dims) => ({ name, type: { tensorType: { elemType: 1, shape: { dim: dims.map(d => typeof d === 'number' ? { dimValue: d } : { dimParam: d }) } } } });
const init = mode === 'inline' ? [{ name: 'W', dims: [OUT, IN], dataType: 1, rawData: new Uint8Array(w.buffer) }]
  : mode === 'external' ? [{ name: 'W', dims: [OUT, IN], dataType: 1, dataLocation: 1, externalData: [{ key: 'location', value: 'w.bin' }, { key: 'offset', value: '0' }, { key: 'length', value: String(w.byteLength) }] }] : [];
const model = P.ModelProto.encode({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }, { domain: 'com.microsoft', version: 1 }], graph: { name: 'g',
  node: [{ opType: 'FusedMatMul', domain: 'com.microsoft', input: ['x', 'W'], output: ['y'], attribute: [{ name: 'transB', type: 2, i: 1 }] }],
  input: [vi('x', ['b', IN]), ...(mode === 'feed' ? [vi('W', [OUT, IN])] : [])], output: [vi('y', ['b', OUT])], initializer: init } }).finish();
console.log('model bytes', model.length, 'rss', rss());
const opts = { executionProviders: ['cpu'], extra: { session: { disable_prepacking: prepack } }, ...(mode === 'external' ? { externalData: [{ path: 'w.bin', data: new Uint8Array(w.buffer) }] } : {}) };
const list = [];
for (let i = 0; i < sessions; i++) { list.push(await ort.InferenceSession.create(model, opts)); console.log('session', i, rss()); }
const x = new ort.Tensor('float32', new Float32Array(8 * IN).fill(1), [8, IN]);
const feeds = { x, ...(mode === 'feed' ? { W: new ort.Tensor('float32', w, [OUT, IN]) } : {}) };
for (const s of list) { const t = performance.now(); const r = await s.run(feeds); console.log('run', (performance.now() - t).toFixed(0), 'ms', r.y.data[0], 'rss', rss()); }
const t = performance.now(); for (let k = 0; k < 3; k++) await list[0].run(feeds); console.log('3 runs', (performance.now() - t).toFixed(0), 'ms rss', rss());
