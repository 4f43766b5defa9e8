import { AgentFlowError, loadConfig } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { runConfigSchema } from './schema';

const load = (...overrides: string[]) => loadConfig(undefined, runConfigSchema, { overrides });
const refused = (...overrides: string[]) => {
  try {
    load(...overrides);
  } catch (error) {
    if (AgentFlowError.hasCode(error, 'INVALID_CONFIG')) return error.message;
    throw error;
  }
  throw new Error(`accepted: ${overrides.join(' ')}`);
};

describe('what the warm start and DAPO train (warmStart.trainable, train.trainable)', () => {
  it("trains the world's random planner in full and then a LoRA on it by default; a folder's model through LoRA in both phases", () => {
    const config = load();
    expect(config.warmStart.trainable).toEqual({ kind: 'full', frozen: [] });
    expect(config.train.trainable).toEqual({ kind: 'lora' });
    const folder = load('policy.model={path: models/Qwen3-8B}');
    expect(folder.warmStart.trainable).toEqual({ kind: 'lora' });
    expect(folder.train.trainable).toEqual({ kind: 'lora' });
    // Said outright, either phase's choice is kept whatever the model.
    expect(load('warmStart.trainable.kind=lora').warmStart.trainable).toEqual({ kind: 'lora' });
    expect(load('policy.model={path: models/Qwen3-8B}', 'warmStart.trainable.kind=full').warmStart.trainable).toEqual({ kind: 'full', frozen: [] });
  });

  it('switches either phase to full training with one --set, at the default of the full kind, and takes frozen patterns in either order', () => {
    const warm = load('warmStart.trainable.kind=full');
    expect(warm.warmStart.trainable).toEqual({ kind: 'full', frozen: [] });
    expect(warm.train.trainable).toEqual({ kind: 'lora' });
    const both = load('warmStart.trainable.kind=full', 'train.trainable.kind=full');
    expect(both.train.trainable).toEqual({ kind: 'full', frozen: [] });
    // The rest of the train block keeps the embedded default's values.
    expect(both.train).toMatchObject({ learningRate: 1e-3, lora: { rank: 16, alpha: 32 }, groupSize: 8 });
    const frozen = ['model.embed_tokens.weight', 'model.layers.*.input_layernorm.weight'];
    for (const order of [
      ['train.trainable.kind=full', `train.trainable.frozen=${JSON.stringify(frozen)}`],
      [`train.trainable.frozen=${JSON.stringify(frozen)}`, 'train.trainable.kind=full'],
    ]) {
      expect(load(...order).train.trainable).toEqual({ kind: 'full', frozen });
    }
    // A config file's block of another kind replaces the default's whole.
    expect(runConfigSchema.parse({ train: { trainable: { kind: 'full' } } }).train.trainable).toEqual({ kind: 'full', frozen: [] });
  });

  it('refuses frozen patterns on LoRA, and an unknown kind', () => {
    expect(refused('train.trainable.frozen=[lm_head.weight]')).toMatch(/train\.trainable/);
    expect(refused('warmStart.trainable.kind=partial')).toMatch(/warmStart\.trainable\.kind/);
  });

  it('refuses full DAPO training with vLLM rollouts, naming both keys: vLLM receives adapters, not whole weights', () => {
    const message = refused('train.trainable.kind=full', 'policy.rollouts={kind: vllm, urls: ["http://127.0.0.1:8000"], model: planner}');
    expect(message).toContain('train.trainable');
    expect(message).toContain('policy.rollouts.kind');
    expect(message).toContain('vLLM servers receive LoRA adapters');
    // Full training in the warm start only is fine: DAPO still trains an adapter.
    expect(load('warmStart.trainable.kind=full', 'policy.rollouts={kind: vllm, urls: ["http://127.0.0.1:8000"], model: planner}').policy.rollouts.kind).toBe('vllm');
  });

  it('refuses DAPO on the warm adapter (train.lora: null) after a full warm start, which leaves none', () => {
    const message = refused('warmStart.trainable.kind=full', 'train.lora=null');
    expect(message).toContain('train.lora');
    expect(message).toContain('warmStart.trainable full leaves no adapter');
    expect(load('warmStart.trainable.kind=full', 'train.lora=null', 'train.trainable.kind=full').train.lora).toBeNull();
  });
});

describe('prm.refreshAt', () => {
  it('is empty by default, takes DAPO steps, and is refused with a credit that uses no PRM', () => {
    expect(load().prm.refreshAt).toEqual([]);
    expect(load('prm.refreshAt=[10, 20]').prm.refreshAt).toEqual([10, 20]);
    expect(refused('prm.refreshAt=[0]')).toMatch(/prm\.refreshAt\.0: Too small/);
    expect(refused('prm.refreshAt=[15]', 'train.credit.kind=outcome')).toMatch(
      /prm\.refreshAt \[15\] refreshes the PRM, but train\.credit kind outcome uses none; remove prm\.refreshAt or use a process credit/,
    );
  });
});
