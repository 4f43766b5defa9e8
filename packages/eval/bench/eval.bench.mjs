// Benchmarks of @agentflow/eval. Run: pnpm --filter @agentflow/eval bench (after build).
// Each figure is compared with a baseline measured in the same run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkGameOf24,
  createSympyEquivalence,
  createTaskWorld,
  findNearDuplicates,
  leakageTokens,
  loadAgentFlowJson,
  loadCsvBenchmark,
} from '../dist/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const datasets = process.env.AGENTFLOW_DATASETS ?? resolve(here, '..', '..', '..', '..', 'shared', 'datasets');

function time(run, repeats = 1) {
  const start = process.hrtime.bigint();
  let result;
  for (let index = 0; index < repeats; index++) result = run();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6 / repeats, result };
}
async function timeAsync(run) {
  const start = process.hrtime.bigint();
  const result = await run();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}

const lines = [];
const log = (line) => {
  lines.push(line);
  console.log(line);
};
log(`node ${process.version}, ${new Date().toISOString()}`);

// 1. Leakage check: inverted index (ours) against all-pairs shingle Jaccard (baseline).
let train;
let test;
if (existsSync(join(datasets, 'aime_1983_2024.csv'))) {
  train = loadCsvBenchmark(join(datasets, 'aime_1983_2024.csv'));
  test = loadAgentFlowJson(join(datasets, 'aime24.json'));
  log(`dedup data: ${train.length} AIME CSV rows x ${test.length} aime24 items`);
} else {
  const world = createTaskWorld({ trainTasks: 1000, testTasks: 100, levels: [1, 2, 3] });
  train = world.split('train').map((task) => ({ id: task.id, question: task.question }));
  test = world.split('test').map((task) => ({ id: task.id, question: task.question }));
  log(`dedup data: shared datasets absent, ${train.length} x ${test.length} task-world questions`);
}
const ours = time(() => findNearDuplicates(train, test), 5);
const baseline = time(() => {
  const shingles = (text) => {
    const tokens = leakageTokens(text);
    const set = new Set();
    for (let index = 0; index + 3 <= tokens.length; index++) set.add(tokens.slice(index, index + 3).join(' '));
    return set;
  };
  const trainSets = train.map((item) => shingles(item.question));
  let pairs = 0;
  for (const item of test) {
    const testSet = shingles(item.question);
    for (const trainSet of trainSets) {
      let shared = 0;
      for (const shingle of testSet) if (trainSet.has(shingle)) shared++;
      if (shared / (trainSet.size + testSet.size - shared) >= 0.5) pairs++;
    }
  }
  return pairs;
}, 5);
log(`dedup: ${ours.ms.toFixed(1)} ms for ${train.length * test.length} pairs (${ours.result.length} found); all-pairs baseline ${baseline.ms.toFixed(1)} ms; ratio ${(baseline.ms / ours.ms).toFixed(2)}x`);

// 2. Game of 24: exact rational evaluator with number-use check, against float eval (baseline, unsafe).
const game = existsSync(join(datasets, 'gameof24.json'))
  ? loadAgentFlowJson(join(datasets, 'gameof24.json')).flatMap((item) => item.references.map((reference) => [reference, item.numbers]))
  : [['(1+1+1)×8', [1, 1, 1, 8]], ['8/(3-8/3)', [3, 3, 8, 8]]];
const rounds = Math.ceil(20000 / game.length);
const gameOurs = time(() => {
  let correct = 0;
  for (let round = 0; round < rounds; round++) for (const [expression, numbers] of game) if (checkGameOf24(expression, numbers).correct) correct++;
  return correct;
});
const gameBaseline = time(() => {
  let correct = 0;
  for (let round = 0; round < rounds; round++) {
    for (const [expression] of game) if (Math.abs(Function(`return (${expression.replace(/×/g, '*').replace(/÷/g, '/')})`)() - 24) < 1e-9) correct++;
  }
  return correct;
});
const checks = rounds * game.length;
log(`game of 24: ${((checks / gameOurs.ms) * 1000).toFixed(0)} checks/s (${gameOurs.result}/${checks} correct); unchecked float-eval baseline ${((checks / gameBaseline.ms) * 1000).toFixed(0)}/s; ours takes ${(gameOurs.ms / gameBaseline.ms).toFixed(1)}x the baseline time (exact rationals, number-use check, no eval)`);

// 3. Task world generation (the embedded default's size and a larger one).
for (const settings of [{ seed: 7, trainTasks: 160, testTasks: 80 }, { seed: 7, trainTasks: 4000, testTasks: 1000, entities: 200, levels: [1, 2, 3] }]) {
  const generated = time(() => createTaskWorld(settings), 3);
  log(`task world ${settings.trainTasks}+${settings.testTasks} tasks: ${generated.ms.toFixed(1)} ms`);
}

// 4. Sympy: one batched process for 20 pairs against one process per pair (baseline).
const hasSympy = spawnSync('python3', ['-I', '-c', 'import sympy']).status === 0;
if (hasSympy) {
  const sympy = createSympyEquivalence();
  const pairs = Array.from({ length: 20 }, (_, index) => [`\\sqrt{${(index + 1) * 4}}`, `2\\sqrt{${index + 1}}`]);
  const batched = await timeAsync(() => sympy.compare(pairs));
  const single = await timeAsync(async () => {
    for (const pair of pairs.slice(0, 5)) await sympy.compare([pair]);
  });
  const perPair = single.ms / 5;
  log(`sympy: 20 pairs in one process ${batched.ms.toFixed(0)} ms (${batched.result.results.filter(Boolean).length}/20 equivalent); one process per pair ${perPair.toFixed(0)} ms each, ${(perPair * 20).toFixed(0)} ms for 20; ratio ${((perPair * 20) / batched.ms).toFixed(1)}x`);
} else {
  log('sympy: python3 with sympy not available, skipped');
}
