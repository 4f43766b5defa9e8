import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dapoConfigSchema } from '@agentflow/dapo';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@agentflow/core';
import { formatMemoryPlan } from '@agentflow/models';
import { runMemoryPlan } from '../pipeline/run-memory-plan';
import { runConfigSchema } from './schema';

const configs = join(__dirname, '..', '..', '..', '..', 'configs');

describe('shipped configs', () => {
  it('configs/default.yaml spells out exactly the built-in defaults', () => {
    expect(loadConfig(join(configs, 'default.yaml'), runConfigSchema)).toEqual(runConfigSchema.parse({}));
  });

  it('configs/aime-qwen3-8b.yaml is valid: AIME 1983-2023 for training, AIME 2024 for testing, DAPO with overlong shaping', () => {
    const config = loadConfig(join(configs, 'aime-qwen3-8b.yaml'), runConfigSchema);
    expect(config.task).toMatchObject({ kind: 'datasets', train: { path: 'data/aime_1983_2024.csv', years: [1983, 2023] }, test: { format: 'agentflow-json' }, onLeakage: 'refuse' });
    expect(config.policy).toMatchObject({ model: { path: 'models/Qwen3-8B' }, prompt: { kind: 'full' }, chatTemplateKwargs: { enable_thinking: false } });
    expect(config.label).toMatchObject({ kind: 'judge', includeReference: true, endpoint: { responseFormat: 'json_object' } });
    expect(config.train).toMatchObject({ overlong: { enabled: true, maxLength: 1024, cacheLength: 256 }, epsHigh: 0.28, warmupSteps: 10, credit: { kind: 'process-sum' } });
  });

  it("configs/agentflow-paper.yaml is the paper's recipe: Qwen2.5-7B-Instruct, outcome credit, 3 turns; its plan fits one H200 with LoRA and refuses full training, naming LoRA", () => {
    const dir = mkdtempSync(join(tmpdir(), 'qwen2.5-7b-'));
    copyFileSync(join(__dirname, '..', '..', '..', '..', 'packages', 'models', 'src', 'config', '__fixtures__', 'qwen2.5-7b-instruct.config.json'), join(dir, 'config.json'));
    const load = (...overrides: string[]) => loadConfig(join(configs, 'agentflow-paper.yaml'), runConfigSchema, { overrides: [`policy.model.path=${dir}`, ...overrides] });
    const config = load();
    expect(config.policy).toMatchObject({ maxSteps: 3, lora: { rank: 64 }, prompt: { kind: 'full' } });
    expect(config.train).toMatchObject({ credit: { kind: 'outcome' }, groupSize: 8, promptsPerMiniBatch: 8, klCoefficient: 0.001, trainable: { kind: 'lora' } });
    const plan = runMemoryPlan(config);
    expect([...new Set(plan.rows.map((row) => row.model))]).toEqual(['process', 'planner']);
    expect(plan.fits).toBe(true);
    const full = runMemoryPlan(load('train.trainable.kind=full'));
    expect(full.fits).toBe(false);
    expect(formatMemoryPlan(full).join('\n')).toMatch(/full-parameter training holds .* Train planner with LoRA instead: .* which fits\./s);
  });

  it('configs/exact-teacher.yaml is the world where every mistake is fatal with an exact teacher on 200 tasks and a text PRM', () => {
    const config = loadConfig(join(configs, 'exact-teacher.yaml'), runConfigSchema);
    const defaults = runConfigSchema.parse({});
    expect(config.task).toEqual({ ...defaults.task, decoyRate: 0, stepSlack: null, teacher: { errorRate: 0, mistakes: ['lookup'], recoveryRate: 0 } });
    expect(config.policy).toEqual(defaults.policy);
    expect(config.warmStart).toMatchObject({ epochs: 20, demonstrations: 200 });
    expect(config.prm).toMatchObject({ input: 'text', confidence: false, loss: 'mse', lora: { rank: 16, alpha: 32 } });
    expect(config.train).toMatchObject({ credit: { kind: 'process-sum' }, lora: { rank: 16, alpha: 32 }, learningRate: 3e-4, promptsPerBatch: 4, promptsPerMiniBatch: 4, klCoefficient: 0 });
  });
});

describe('the train block is @agentflow/dapo\'s schema', () => {
  const parse = (train: unknown) => runConfigSchema.parse({ train }).train;

  it('takes every key of the DAPO schema', () => {
    // Every key has a value, but the optional dr-grpo budget and micro-batch token budget, which can be set.
    const keys = Object.keys(dapoConfigSchema.shape).filter((key) => key !== 'drGrpoTokenBudget' && key !== 'microBatchTokens');
    expect(Object.keys(parse({})).sort()).toEqual([...keys, 'trainable', 'lora', 'evaluationTasks'].sort());
    expect(parse({ aggregation: 'dr-grpo', drGrpoTokenBudget: 512 })).toMatchObject({ aggregation: 'dr-grpo', drGrpoTokenBudget: 512 });
    expect(parse({ microBatchTokens: 4096 })).toMatchObject({ microBatchTokens: 4096 });
  });

  it('sets overlong shaping and eps_high, keeping the rest of the default', () => {
    const train = parse({ epsHigh: 0.3, overlong: { enabled: true, maxLength: 64, cacheLength: 16 } });
    expect(train.epsHigh).toBe(0.3);
    expect(train.overlong).toEqual({ enabled: true, maxLength: 64, cacheLength: 16, penaltyFactor: 1 });
    // The embedded default's other values stay: one knob does not reset the rest to DAPO's paper values.
    expect(train).toMatchObject({ learningRate: 1e-3, groupSize: 8, klCoefficient: 0.05, epsLow: 0.2 });
  });

  it('replaces a credit or dynamic sampling of another kind whole, and merges one of the same kind', () => {
    // The default: the outcome advantage plus the PRM's process-sum advantage, at equal weight.
    expect(parse({}).credit).toEqual({ kind: 'mix', lambda: 1, process: { kind: 'process-sum' } });
    expect(parse({ credit: { kind: 'outcome' } }).credit).toEqual({ kind: 'outcome' });
    expect(parse({ credit: { lambda: 0.5 } }).credit).toEqual({ kind: 'mix', lambda: 0.5, process: { kind: 'process-sum' } });
    expect(parse({ credit: { kind: 'process-sum' } }).credit).toEqual({ kind: 'process-sum' });
    expect(parse({ dynamicSampling: { kind: 'drop' } }).dynamicSampling).toEqual({ kind: 'drop', stdThreshold: 1e-3 });
    expect(parse({ dynamicSampling: { maxRounds: 3 } }).dynamicSampling).toEqual({ kind: 'refill', maxRounds: 3, stdThreshold: 1e-3 });
  });

  it('refuses unknown keys and bad values with their key path', () => {
    const typo = runConfigSchema.safeParse({ train: { epsHihg: 0.3 } });
    expect(typo.success).toBe(false);
    expect(JSON.stringify(typo.error?.issues)).toContain('epsHihg');
    const overlong = runConfigSchema.safeParse({ train: { overlong: { enabled: true, maxLength: 8, cacheLength: 16 } } });
    expect(overlong.error?.issues[0]?.path).toEqual(['train', 'overlong']);
    const miniBatch = runConfigSchema.safeParse({ train: { promptsPerBatch: 2, promptsPerMiniBatch: 4 } });
    expect(miniBatch.error?.issues[0]?.path).toEqual(['train', 'promptsPerMiniBatch']);
  });

  it('refuses a preset planner for benchmark datasets', () => {
    const result = runConfigSchema.safeParse({ task: { kind: 'datasets', train: { path: 'a.jsonl', format: 'jsonl' }, test: { path: 'b.jsonl', format: 'jsonl' } } });
    expect(result.error?.issues[0]?.path).toEqual(['policy', 'model']);
    expect(result.error?.issues[0]?.message).toContain('give policy.model.path');
  });
});
