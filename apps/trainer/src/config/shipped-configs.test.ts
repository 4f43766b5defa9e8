import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './load-config';
import { runConfigSchema } from './schema';

const configs = join(__dirname, '..', '..', '..', '..', 'configs');

describe('shipped configs', () => {
  it('configs/default.yaml spells out exactly the built-in defaults', () => {
    expect(loadConfig(join(configs, 'default.yaml'), runConfigSchema)).toEqual(runConfigSchema.parse({}));
  });

  it('configs/aime-qwen3-8b.yaml is valid: AIME 1983-2023 for training, AIME 2024 for testing', () => {
    const config = loadConfig(join(configs, 'aime-qwen3-8b.yaml'), runConfigSchema);
    expect(config.task).toMatchObject({ kind: 'datasets', train: { years: [1983, 2023] }, test: { format: 'agentflow-json' }, allowLeakage: false });
    expect(config.policy.model).toEqual({ path: 'models/Qwen3-8B' });
    expect(config.label.kind).toBe('judge');
  });

  it('configs/exact-teacher.yaml is the default world with an exact teacher on 200 tasks, a text PRM and DAPO on the warm adapter', () => {
    const config = loadConfig(join(configs, 'exact-teacher.yaml'), runConfigSchema);
    const defaults = runConfigSchema.parse({});
    expect(config.task).toEqual(defaults.task);
    expect(config.policy).toEqual(defaults.policy);
    expect(config.warmStart).toMatchObject({ epochs: 20, demonstrations: 200, expertErrorRate: 0 });
    expect(config.prm).toMatchObject({ input: 'text', confidence: false, loss: 'mse', lora: { rank: 16, alpha: 32 } });
    expect(config.train).toMatchObject({ credit: 'process', lora: null, learningRate: 3e-4, promptsPerStep: 4, klCoefficient: 0 });
  });
});
