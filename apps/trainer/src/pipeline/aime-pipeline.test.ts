/**
 * The reference setup (configs/aime-qwen3-8b.yaml) end to end, with `--set` overrides only for
 * scale and endpoints: the planner and the PRM are random Qwen3 models at a tiny shape, saved
 * as Hugging Face folders in bf16 with the real Qwen3 tokenizer and chat template; the fixed
 * verifier and generator are a loopback Ollama, the judge a loopback OpenAI-compatible server
 * (DeepSeek's json_object mode) that adds a key of its own to every reply, and a second judge
 * whose replies are of no use; the data are slices of the real AIME files. The same setup runs
 * once more, at its smallest, with a Qwen2.5 planner and a Llama 3.1 PRM (their real tokenizers
 * and chat templates, thinking off dropped as they have no switch). Needs the benchmark
 * files of `../shared/datasets` (or AGENTFLOW_DATASETS); says so and skips without them.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readJsonl, type Trajectory } from '@agentflow/core';
import { loadAgentFlowJson, loadCsvBenchmark, runSummarySchema, selectItems } from '@agentflow/eval';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatRequestBody, type LoopbackChatServer, startOllamaServer, startOpenAiCompatibleServer } from '@agentflow/llm/testing';
import { writeTinyModelFolder, writeTinyQwen3Folder } from '@agentflow/models/testing';

const root = resolve(__dirname, '..', '..', '..', '..');
const cli = join(root, 'apps', 'trainer', 'dist', 'cli.js');
const reference = join(root, 'configs', 'aime-qwen3-8b.yaml');
const datasets = process.env.AGENTFLOW_DATASETS ?? resolve(root, '..', 'shared', 'datasets');
const present = existsSync(join(datasets, 'aime_1983_2024.csv')) && existsSync(join(datasets, 'aime24.json'));
if (!present) console.log(`aime-pipeline: SKIPPED, no AIME files at ${datasets} (set AGENTFLOW_DATASETS to run this suite).`);

const API_KEY = 'loopback-key';

interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without blocking this process: the loopback servers answer it from here. */
function agentflow(args: string[], settings: { killWhen?: (out: string) => boolean; out?: string } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('node', [cli, ...args], { env: { ...process.env, DEEPSEEK_API_KEY: API_KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = settings.killWhen
      ? setInterval(() => {
          if (settings.out && settings.killWhen?.(settings.out)) child.kill('SIGKILL');
        }, 50)
      : undefined;
    child.on('error', reject);
    child.on('exit', (status) => {
      if (timer) clearInterval(timer);
      resolvePromise({ status, stdout, stderr });
    });
  });
}

const stagesOf = (dir: string): Record<string, { finishedAt: string }> =>
  existsSync(join(dir, 'state.json')) ? (JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { stages: Record<string, { finishedAt: string }> }).stages : {};

describe.skipIf(!present)('agentflow run --config configs/aime-qwen3-8b.yaml (tiny Qwen3 folders, loopback endpoints, real AIME slices)', () => {
  let work: string;
  let ollama: LoopbackChatServer;
  let judge: LoopbackChatServer;
  let garbled: LoopbackChatServer;
  let scale: string[];
  const answers = new Map<string, string>();
  let generatorCalls = 0;

  beforeAll(async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
    work = mkdtempSync(join(tmpdir(), 'agentflow-aime-'));
    const planner = await writeTinyQwen3Folder(join(work, 'Qwen3-planner'), { seed: 1, dtype: 'bfloat16' });
    const prm = await writeTinyQwen3Folder(join(work, 'Qwen3-prm'), { seed: 2, dtype: 'bfloat16' });
    const train = selectItems(loadCsvBenchmark(join(datasets, 'aime_1983_2024.csv')), { years: { from: 1983, to: 2023 } }).slice(0, 4);
    const test = loadAgentFlowJson(join(datasets, 'aime24.json')).slice(0, 2);
    for (const item of [...train, ...test]) answers.set(item.question.slice(0, 60), item.answer);
    // The fixed modules: the verifier lets the loop go on; the generator answers right every other
    // call, so the groups of DAPO have rewards that differ (a random planner never finishes well).
    ollama = await startOllamaServer('qwen2.5:7b-instruct', (body) => {
      const system = body.messages[0]?.content ?? '';
      if (system.includes('final answer to the question')) {
        const question = body.messages.at(-1)?.content ?? '';
        const answer = [...answers].find(([start]) => question.includes(start))?.[1] ?? '0';
        return generatorCalls++ % 2 === 0 ? `\\boxed{${answer}}` : '\\boxed{1}';
      }
      return JSON.stringify({ analysis: 'not solved yet', stop: false });
    });
    // The judge grades by a hash of the decision: labels that differ, so the PRM's scores (and DAPO's process credit) do too.
    // Like many a chat model in json_object mode, it adds a key of its own (its analysis) to every reply.
    judge = await startOpenAiCompatibleServer('deepseek-chat', API_KEY, (body) => {
      const step = body.messages.at(-1)?.content ?? '';
      const decision = step.slice(step.indexOf('Decision to score'));
      const hash = [...decision].reduce((sum, character) => (sum * 31 + character.charCodeAt(0)) % 1009, 7);
      return JSON.stringify({ analysis: 'the decision moves toward the answer', score: (hash % 11) / 10, rationale: 'loopback judge' });
    });
    // A judge that never gives a score: no step can be labelled with its replies.
    garbled = await startOpenAiCompatibleServer('deepseek-chat', API_KEY, () => JSON.stringify({ verdict: 'good' }));
    scale = [
      ...['--set', `task.train.path=${join(datasets, 'aime_1983_2024.csv')}`, '--set', 'task.train.limit=4'],
      ...['--set', `task.test.path=${join(datasets, 'aime24.json')}`, '--set', 'task.test.limit=2'],
      ...['--set', 'device=cpu', '--set', `policy.model.path=${planner}`, '--set', `prm.backbone.path=${prm}`],
      ...['--set', `fixedModules.url=${ollama.url}`, '--set', `label.endpoint.baseUrl=${judge.url}`],
      ...['--set', 'policy.lora={rank: 4, alpha: 8}', '--set', 'policy.maxNewTokens=64', '--set', 'policy.maxSteps=2'],
      ...['--set', 'collect.maxTasks=4', '--set', 'label.maxTrajectories=4', '--set', 'prm.lora={rank: 2, alpha: 4}', '--set', 'prm.epochs=2'],
      ...['--set', 'train.totalSteps=2', '--set', 'train.groupSize=2', '--set', 'train.promptsPerBatch=1', '--set', 'train.promptsPerMiniBatch=1'],
      ...['--set', 'train.evaluationTasks=1', '--set', 'train.evaluateEvery=2', '--set', 'train.checkpointEvery=1', '--set', 'train.warmupSteps=0'],
      ...['--set', 'train.learningRate=0.001', '--set', 'train.overlong={enabled: true, maxLength: 64, cacheLength: 16}'],
    ];
  }, 120_000);

  afterAll(async () => {
    await ollama?.close();
    await judge?.close();
    await garbled?.close();
  });

  it('runs every stage: stopped at label by a judge with nothing usable, resumed with a working one, killed with SIGKILL after labelling and resumed with nothing lost or repeated', async () => {
    const out = join(work, 'run');
    // A judge whose replies are of no use stops the run at the label stage, saying so.
    const stopped = await agentflow(['run', '--config', reference, ...scale, '--set', `label.endpoint.baseUrl=${garbled.url}`, '--out', out, '--quiet']);
    expect(stopped.status).toBe(1);
    const tried = readJsonl<Trajectory>(join(out, 'trajectories.jsonl')).flatMap((trajectory) => trajectory.steps.filter((collectedStep) => collectedStep.action !== null));
    expect(stopped.stderr).toContain(`error [RUNTIME_ERROR]: label: the judge deepseek-chat at ${garbled.url} gave no usable reply for any of ${tried.length} step`);
    expect(stopped.stderr).toContain('verdict');
    expect(stopped.stderr).toContain('Point label.endpoint (its model, baseUrl or responseFormat) at a judge');
    expect(stopped.stderr).toContain(`agentflow run --resume ${out}`);
    expect(stopped.stderr).not.toContain('NOT_FOUND');
    expect(Object.keys(stagesOf(out))).toEqual(['warm-start', 'eval-before', 'collect']);
    // labels.jsonl is there (format errors, labelled 0 without a call, are all it may hold), and the stage's summary.
    expect(readJsonl<{ action: unknown }>(join(out, 'labels.jsonl')).every((label) => label.action === null)).toBe(true);
    expect(JSON.parse(readFileSync(join(out, 'label-summary.json'), 'utf8'))).toMatchObject({ labeller: 'judge', usable: 0, failures: tried.length });

    // Resumed with the config pointed at a working judge, then killed once it has labelled.
    const killed = await agentflow(['run', '--resume', out, '--set', `label.endpoint.baseUrl=${judge.url}`, '--quiet'], {
      out,
      // After labelling: every judge call is made before the kill, so the resume must make none again.
      killWhen: (dir) => 'label' in stagesOf(dir),
    });
    expect(killed.status).toBeNull();
    const before = stagesOf(out);
    expect(before.report).toBeUndefined();
    const resumed = await agentflow(['run', '--resume', out, '--quiet']);
    expect(resumed.stderr).toBe('');
    expect(resumed.status).toBe(0);
    const after = stagesOf(out);
    for (const [stage, { finishedAt }] of Object.entries(before)) expect(after[stage]?.finishedAt).toBe(finishedAt);
    expect(Object.keys(after)).toEqual(['warm-start', 'eval-before', 'collect', 'label', 'train-prm', 'train', 'eval-after', 'report']);

    // config.json records the merged config: the reference file with the overrides, the resume's included.
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ name: 'aime-qwen3-8b', device: 'cpu', train: { totalSteps: 2, epsHigh: 0.28, overlong: { enabled: true, maxLength: 64 } } });
    expect(config.label.endpoint.baseUrl).toBe(judge.url);

    // Trajectories: each training task collected once; the planner's prompt is Qwen3's template, thinking off.
    const collected = readJsonl<Trajectory>(join(out, 'trajectories.jsonl'));
    const ids = collected.map((trajectory) => trajectory.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(4);
    expect(collected.every((trajectory) => trajectory.taskId?.match(/^(19[89]\d|20[01]\d|202[0-3])_AIME/))).toBe(true);
    const step = collected[0]!.steps[0]!;
    expect(step.promptTokenIds?.length).toBeGreaterThan(0);
    expect(step.completionTokenIds?.length).toBeGreaterThan(0);

    // Judge labels: one per planner step, every step that parsed judged (its reply's extra key
    // dropped), with the reference answer, each distinct step once.
    const labels = readJsonl<{ id: string; label: number; provenance: { labeller: string; judgeModel?: string } }>(join(out, 'labels.jsonl'));
    const steps = collected.flatMap((trajectory) => trajectory.steps);
    const parsed = steps.filter((collectedStep) => collectedStep.action !== null).length;
    expect(parsed).toBeGreaterThan(0);
    expect(labels.length).toBe(steps.length);
    expect(labels.filter((label) => label.provenance.judgeModel === 'deepseek-chat')).toHaveLength(parsed);
    expect(new Set(labels.map((label) => label.id)).size).toBe(labels.length);
    expect(labels.every((label) => label.provenance.labeller === 'judge')).toBe(true);
    expect(JSON.parse(readFileSync(join(out, 'label-summary.json'), 'utf8'))).toMatchObject({ usable: parsed, failures: 0 });
    const judged = judge.requests.map((request: ChatRequestBody) => JSON.stringify(request.messages));
    expect(judged.length).toBeGreaterThan(0);
    expect(judged.every((text) => text.includes('Reference answer of the task'))).toBe(true);
    expect(judge.requests.every((request) => request.response_format?.type === 'json_object')).toBe(true);
    // No step was judged twice, across the kill and the resume included (the cache answers them).
    expect(new Set(judged).size).toBe(judged.length);

    // The fixed modules answered through Ollama's /api/chat.
    expect(ollama.requests.length).toBeGreaterThan(0);

    // A PRM checkpoint (LoRA on its own backbone) and DAPO checkpoints in the PEFT layout.
    expect(existsSync(join(out, 'checkpoints', 'prm', 'prm-config.json'))).toBe(true);
    expect(existsSync(join(out, 'checkpoints', 'prm', 'adapter', 'adapter_model.safetensors'))).toBe(true);
    expect(existsSync(join(out, 'checkpoints', 'policy-final', 'adapter_model.safetensors'))).toBe(true);
    const train = readJsonl<{ stage: string; step: number; gradNorm: number }>(join(out, 'metrics.jsonl')).filter((row) => row.stage === 'train');
    expect(train.map((row) => row.step)).toEqual([1, 2]);
    // The PRM's step scores gave DAPO a gradient: the adapter moved.
    expect(Math.max(...train.map((row) => row.gradNorm))).toBeGreaterThan(0);
    expect(existsSync(join(out, 'checkpoints', 'dapo'))).toBe(true);

    // summary.json with the leakage result, and the report.
    const summary = runSummarySchema.parse(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')));
    expect(summary.task).toMatchObject({ kind: 'datasets', train: 4, test: 2 });
    expect(summary.leakage).toMatchObject({ method: 'near-duplicate', checked: { train: 4, test: 2 }, pairs: [], dropped: [], onLeak: 'refuse' });
    expect(summary.before.total).toBe(2);
    expect(summary.after.total).toBe(2);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('before DAPO');
  }, 540_000);

  // The paper's planner family and Llama 3.1, in one run: a Qwen2.5 planner with a Llama 3.1 PRM,
  // every stage once, at the smallest scale that still runs each.
  it('runs every stage with a Qwen2.5 planner and a Llama 3.1 PRM (--set policy.model.path, prm.backbone.path)', async () => {
    // Half the width and one layer: the 152k- and 128k-row embeddings and heads dominate the cost.
    const planner = await writeTinyModelFolder(join(work, 'qwen2.5-planner'), { family: 'qwen2.5', seed: 1, hiddenSize: 16, layers: 1 });
    const prm = await writeTinyModelFolder(join(work, 'llama3.1-prm'), { family: 'llama3.1', seed: 2, hiddenSize: 16, layers: 1 });
    const out = join(work, 'run-families');
    const smallest = [
      ...['--set', `policy.model.path=${planner}`, '--set', `prm.backbone.path=${prm}`],
      ...['--set', 'task.train.limit=2', '--set', 'task.test.limit=1', '--set', 'collect.maxTasks=2', '--set', 'label.maxTrajectories=2'],
      ...['--set', 'policy.maxSteps=1', '--set', 'prm.epochs=1', '--set', 'train.totalSteps=1', '--set', 'train.dynamicSampling={kind: off}'],
      // Constrained decoding closes the JSON within the budget, so 32 tokens still give a decision that parses.
      ...['--set', 'policy.maxNewTokens=32', '--set', 'train.overlong={enabled: true, maxLength: 32, cacheLength: 8}'],
    ];
    const run = await agentflow(['run', '--config', reference, ...scale, ...smallest, '--out', out, '--quiet']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(Object.keys(stagesOf(out))).toEqual(['warm-start', 'eval-before', 'collect', 'label', 'train-prm', 'train', 'eval-after', 'report']);
    expect(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'))).toMatchObject({ policy: { model: { path: planner } }, prm: { backbone: { path: prm } } });
    // The planner's prompts are Qwen2.5's own chat template (<|im_start|>system\n ... <|im_start|>assistant\n),
    // with nothing of Qwen3's thinking block.
    const steps = readJsonl<Trajectory>(join(out, 'trajectories.jsonl')).flatMap((trajectory) => trajectory.steps);
    expect(steps.length).toBeGreaterThan(0);
    for (const step of steps) {
      expect(step.promptTokenIds!.slice(0, 3)).toEqual([151644, 8948, 198]);
      expect(step.promptTokenIds!.slice(-3)).toEqual([151644, 77091, 198]);
    }
    // The PRM trained a LoRA on the Llama backbone, reading the steps through its own tokenizer
    // (the reference config's plain rendering, `prm.input: text`); DAPO saved the planner's adapter.
    const prmConfig = JSON.parse(readFileSync(join(out, 'checkpoints', 'prm', 'prm-config.json'), 'utf8'));
    expect(prmConfig.settings.backbone.path).toBe(prm);
    expect(existsSync(join(out, 'checkpoints', 'prm', 'adapter', 'adapter_model.safetensors'))).toBe(true);
    expect(existsSync(join(out, 'checkpoints', 'policy-final', 'adapter_model.safetensors'))).toBe(true);
    expect(readJsonl<{ stage: string; step: number }>(join(out, 'metrics.jsonl')).filter((row) => row.stage === 'train').map((row) => row.step)).toEqual([1]);
    const summary = runSummarySchema.parse(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')));
    expect(summary.before.total).toBe(1);
    expect(summary.after.total).toBe(1);
  }, 300_000);

  it('refuses to train on AIME 2024, in the dry run and in the run, naming the leaked pairs', async () => {
    const leaky = [...scale, '--set', 'task.train.years=[2024, 2024]', '--set', 'task.train.limit=40', '--set', 'task.test.limit=30'];
    const dry = await agentflow(['run', '--config', reference, ...leaky, '--dry-run']);
    expect(dry.status).toBe(2);
    expect(dry.stdout).toMatch(/✘ train\/test leakage: \d+ test item\(s\) leak into .*2024_AIME/);
    const out = join(work, 'leaky');
    const run = await agentflow(['run', '--config', reference, ...leaky, '--out', out]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/DATA_LEAKAGE.*2024_AIME_I+_\d+/s);
    expect(existsSync(join(out, 'state.json'))).toBe(false);
  }, 120_000);
});
