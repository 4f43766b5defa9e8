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

  it('configs/imperfect-teacher.yaml is the default world with a flawed teacher, a chat PRM and a fresh DAPO adapter', () => {
    const config = loadConfig(join(configs, 'imperfect-teacher.yaml'), runConfigSchema);
    const defaults = runConfigSchema.parse({});
    expect(config.task).toEqual(defaults.task);
    expect(config.policy).toEqual(defaults.policy);
    expect(config.warmStart).toMatchObject({ demonstrations: null, expertErrorRate: 0.3, expertMistakes: ['operator'] });
    expect(config.prm).toMatchObject({ input: 'chat', loss: 'bce', learningRate: 0.001 });
    expect(config.train).toMatchObject({ credit: 'mix', lora: { rank: 16, alpha: 32 }, learningRate: 0.01 });
  });
});
