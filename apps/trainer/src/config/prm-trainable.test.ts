import { loadConfig } from '@agentflow/core';
import { resolvePrmTrainable } from '@agentflow/prm';
import { describe, expect, it } from 'vitest';
import { formatDryRun } from '../pipeline/dry-run';
import { runMemoryModels } from '../pipeline/run-memory-plan';
import { runConfigSchema } from './schema';

const load = (...overrides: string[]) => loadConfig(undefined, runConfigSchema, { overrides });
const prmLine = (printed: string) => printed.split('\n').find((line) => line.startsWith('  PRM:'));

describe('prm.trainable: what trains with the PRM head', () => {
  it('is absent by default: the head alone, or LoRA when prm.lora is set (its earlier spelling)', () => {
    const defaults = load();
    expect(defaults.prm.trainable).toBeUndefined();
    expect(resolvePrmTrainable(defaults.prm)).toEqual({ kind: 'head' });
    expect(resolvePrmTrainable(load('prm.lora={rank: 16, alpha: 32}').prm)).toMatchObject({ kind: 'lora', rank: 16, alpha: 32 });
    expect(prmLine(formatDryRun(defaults, [], ['train-prm']))).toMatch(/, head only, bce,/);
  });

  it('takes --set prm.trainable.kind=full, frozen patterns and its own learning rate; the dry run and the memory plan say so', () => {
    const config = load('prm.trainable.kind=full', 'prm.backboneLearningRate=0.001');
    expect(config.prm.trainable).toEqual({ kind: 'full', frozen: [] });
    expect(config.prm.backboneLearningRate).toBe(0.001);
    expect(load('prm.trainable={kind: full, frozen: ["model.embed_tokens.weight"]}').prm.trainable).toEqual({ kind: 'full', frozen: ['model.embed_tokens.weight'] });
    expect(prmLine(formatDryRun(config, [], ['train-prm']))).toMatch(/, every weight of the backbone \(lr 0\.001\) and the head, bce,/);
    const prm = runMemoryModels(config).find((model) => model.name === 'PRM')!;
    expect(prm.fullTraining).toEqual({ reference: 'copy' });
    expect(prm.sessions.map((session) => session.name)).toEqual(['step scoring', 'training']);
    // LoRA through prm.trainable: PEFT's shape unless given, and the plan counts its adapter.
    const lora = load('prm.trainable.kind=lora');
    expect(lora.prm.trainable).toMatchObject({ kind: 'lora', rank: 8, alpha: 16 });
    expect(runMemoryModels(lora).find((model) => model.name === 'PRM')).toMatchObject({ loraRank: 8, trained: true });
    expect(prmLine(formatDryRun(lora, [], ['train-prm']))).toMatch(/, LoRA rank 8, /);
  });

  it('refuses prm.trainable with prm.lora set, with INVALID_CONFIG naming both', () => {
    let thrown: unknown;
    try {
      load('prm.lora={rank: 16, alpha: 32}', 'prm.trainable.kind=full');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'INVALID_CONFIG' });
    expect((thrown as Error).message).toMatch(
      /prm\.trainable: prm\.lora \(LoRA rank 16\) and prm\.trainable \(full\) both say what trains with the PRM head; prm\.lora is the earlier spelling of prm\.trainable: \{ kind: lora, rank, alpha \}: set prm\.lora=null/,
    );
    expect(() => load('prm.lora={rank: 16, alpha: 32}', 'prm.trainable.kind=lora')).toThrow(/prm\.lora \(LoRA rank 16\) and prm\.trainable \(LoRA rank 8\)/);
    expect(() => load('prm.trainable.kind=everything')).toThrow(/prm\.trainable/);
  });
});
