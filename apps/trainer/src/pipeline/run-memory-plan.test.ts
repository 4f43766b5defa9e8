import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PREFILL_CHUNK_TOKENS, getModelPreset, loadQwen3Config, parameterCount, toHfConfig } from '@agentflow/models';
import { openConfiguredTaskSource } from '@agentflow/eval';
import { DEFAULT_PRM_MAX_TOKENS, DEFAULT_PRM_TRAINING_BATCH_SIZE, prmSettingsSchema, prmTrainingSettingsSchema } from '@agentflow/prm';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@agentflow/core';
import { runConfigSchema } from '../config/schema';
import { formatDryRun } from './dry-run';
import { runMemoryModels, runMemoryPlan } from './run-memory-plan';

// Folders with Qwen3-8B's and Qwen3-0.6B's config.json only: the plan reads shapes, not weights.
const root = mkdtempSync(join(tmpdir(), 'agentflow-plan-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
function configFolder(name: string, preset: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  // torch_dtype as the published checkpoints say it: bf16.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...toHfConfig(getModelPreset(preset)), torch_dtype: 'bfloat16' }));
  return dir;
}
const planner = configFolder('Qwen3-8B', 'qwen3-8b-shape');
const prm = configFolder('Qwen3-0.6B', 'qwen3-0.6b-shape');
const configs = join(import.meta.dirname, '..', '..', '..', '..', 'configs');
const reference = join(configs, 'aime-qwen3-8b.yaml');
const load = (...overrides: string[]) =>
  loadConfig(reference, runConfigSchema, { overrides: [`policy.model.path=${planner}`, `prm.backbone.path=${prm}`, ...overrides] });

describe('the memory plan of --dry-run', () => {
  it('prints the reference setup (Qwen3-8B planner with LoRA, Qwen3-0.6B PRM) session by session, with its verdict on one H200', () => {
    const plan = runMemoryPlan(load());
    expect(plan.device).toBe('cuda');
    expect(plan.availableBytes).toBe(139 * 2 ** 30);
    const parts = plan.rows.map((row) => `${row.model} ${row.part}`);
    expect(parts).toEqual(
      expect.arrayContaining(['planner weights', 'planner generation (activations)', 'planner training step (activations)', 'PRM weights', 'PRM step scoring (activations)']),
    );
    const printed = formatDryRun(load(), [], ['train']);
    expect(printed).toMatch(/memory plan \(predicted peak/);
    // policy.dtype auto on CUDA: the folder's bf16 in one device copy (the inference and training
    // graphs are branches of one session), cast to float32 per use (the training step holds the head's 2.32 GiB).
    expect(printed).toMatch(/planner weights: 15\.26 GiB \(8\.19B parameters, bfloat16 \(15\.26 GiB\) x 1 device copy, one ONNX Runtime session whose branches are its graphs \(inference, training\)\)/);
    expect(printed).toMatch(/planner float32 casts: 2\.32 GiB .*training 2\.32 GiB/);
    expect(formatDryRun(load('policy.dtype=float32'), [], ['train'])).toMatch(/planner weights: 30\.51 GiB \(8\.19B parameters, float32 \(30\.51 GiB\) x 1 device copy/);
    expect(runMemoryPlan(load('policy.dtype=float32')).totalBytes - plan.totalBytes).toBeCloseTo((30.51 - 15.26 - 2.32) * 2 ** 30, -8);
    // Issue #32's bound: bf16 weights in one device copy, at most 60 GiB of the H200's 139.
    expect(plan.totalBytes).toBeLessThan(60 * 2 ** 30);
    expect(plan.fits).toBe(true);
    expect(printed).toMatch(/total: [\d.]+ GiB of 139\.00 GiB on cuda \(a session per model: its weights once, the largest of its graphs' activations\): fits/);
    expect(formatDryRun(load('policy.recompute=false'), [], ['train'])).toMatch(/DOES NOT FIT: [\d.]+ GiB over/);
  });

  it('follows the device memory the config states, and recomputation lowers the training step', () => {
    expect(runMemoryPlan(load('deviceMemoryGiB=100000')).fits).toBe(true);
    const step = (config: ReturnType<typeof load>) => runMemoryPlan(config).rows.find((row) => row.part === 'training step (activations)')!.bytes;
    expect(step(load())).toBeLessThan(step(load('policy.recompute=false')));
    // The token budget bounds the micro-batch: 8 rows without it, 1 row with it.
    expect(step(load('train.microBatchTokens=100000', 'train.microBatchRows=8'))).toBeGreaterThan(4 * step(load()));
    // A PRM with LoRA trains with the planner's recompute setting.
    const prmTraining = (...overrides: string[]) =>
      runMemoryPlan(load('prm.lora={rank: 16, alpha: 32}', ...overrides)).rows.find((row) => row.model === 'PRM' && row.part === 'training (activations)')!.bytes;
    expect(prmTraining()).toBeLessThan(prmTraining('policy.recompute=false') / 4);
  });
});

describe('the memory plan of full-parameter training', () => {
  it('counts every weight with its AdamW state when either phase trains in full, and the warm planner as a copy when DAPO does with a KL term', () => {
    const plannerOf = (...overrides: string[]) => runMemoryModels(load(...overrides))[0]!;
    expect(plannerOf()).toMatchObject({ loraRank: 64, trained: true });
    expect(plannerOf().fullTraining).toBeUndefined();
    expect(plannerOf('train.trainable.kind=full')).toMatchObject({ fullTraining: { reference: 'none' } });
    expect(plannerOf('train.trainable.kind=full', 'train.klCoefficient=0.05')).toMatchObject({ fullTraining: { reference: 'copy' } });
    expect(plannerOf('train.trainable.kind=full').loraRank).toBeUndefined();
    expect(plannerOf('warmStart.trainable.kind=full', 'train.lora={rank: 16, alpha: 32}')).toMatchObject({ fullTraining: { reference: 'none' } });
    // Qwen3-8B trained in full does not fit one H200; the plan says what LoRA would need.
    const plan = runMemoryPlan(load('train.trainable.kind=full'));
    expect(plan.rows.some((row) => row.model === 'planner' && row.part === 'full training')).toBe(true);
    expect(plan.fits).toBe(false);
    expect(plan.advice.join('\n')).toMatch(/LoRA/);
    // The dry run's summary says what each phase trains.
    const printed = formatDryRun(load('train.trainable.kind=full', 'warmStart.trainable={kind: full, frozen: ["model.embed_tokens.weight"]}'), [], ['train']);
    expect(printed).toContain('training every weight of the warm planner');
    expect(formatDryRun(load(), [], ['train'])).toContain("training the planner's own adapter (policy.lora)");
  });
});

describe('the memory plan of the embedded default', () => {
  it('plans the 128-wide planner the warm start builds from task.planner, under a ceiling of its vocabulary', async () => {
    const config = loadConfig(join(configs, 'default.yaml'), runConfigSchema);
    const [planner, prm] = runMemoryModels(config);
    // The run's builder: the world's preset planner, from a few of its training questions.
    const configured = openConfiguredTaskSource(config.task, { seed: config.seed });
    const samples = configured.source
      .split('train')
      .slice(0, 40)
      .map((item) => ({ prompt: [{ role: 'user' as const, content: item.question }], completion: JSON.stringify({ action: 'finish', action_input: item.answer }) }));
    const dir = join(root, 'policy');
    await configured.createPresetPlanner!(dir, samples, config.seed);
    const built = loadQwen3Config(dir);
    expect(built.hiddenSize).toBe(128);
    expect(planner!.config).toEqual({ ...built, vocabSize: planner!.config.vocabSize });
    expect(planner!.config.vocabSize).toBeGreaterThanOrEqual(built.vocabSize);
    // The PRM's backbone is the warm planner with its adapter merged: the same model.
    expect(prm!.config).toEqual(planner!.config);
    // What the plan reports: one float32 copy of the planner's weights on the CPU, of the planned parameters.
    const weights = runMemoryPlan(config, 64 * 2 ** 30).rows.find((row) => row.model === 'planner' && row.part === 'weights')!;
    expect(weights.bytes).toBe(4 * parameterCount(planner!.config));
    expect(parameterCount(planner!.config) - parameterCount(built)).toBe((planner!.config.vocabSize - built.vocabSize) * 128);
  });

  it("sizes generation and the PRM's training with the packages' own defaults", () => {
    const [planner, prm] = runMemoryModels(load('prm.lora={rank: 16, alpha: 32}'));
    expect(planner!.sessions.find((session) => session.name === 'generation')).toMatchObject({ kind: 'inference', chunk: DEFAULT_PREFILL_CHUNK_TOKENS });
    expect(prm!.sessions.find((session) => session.name === 'training')).toMatchObject({ kind: 'scalar-head', rows: DEFAULT_PRM_TRAINING_BATCH_SIZE });
    // The PRM trains with that batch: the run's train-prm stage sets none.
    expect(prmTrainingSettingsSchema.parse({}).batchSize).toBe(DEFAULT_PRM_TRAINING_BATCH_SIZE);
    // The PRM cuts its inputs to its default maxTokens, and the plan sizes them so.
    expect(prmSettingsSchema.parse({}).maxTokens).toBe(DEFAULT_PRM_MAX_TOKENS);
    const chat = runMemoryModels(load('prm.input=chat', 'policy.maxNewTokens=2048'))[1]!;
    expect(chat.sessions.map((session) => (session.kind === 'scalar-head' ? session.sequence : undefined))).toEqual([DEFAULT_PRM_MAX_TOKENS]);
  });
});
