import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../weights/model-folder';
import { writeRandomModelFolder } from '../weights/random-model-folder';
import { writeLoraAdapterFolder } from './lora-adapter-folder';
import { loadLoraAdapter } from './peft-format';

describe('writeLoraAdapterFolder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lora-adapter-folder-'));
  const modelDir = join(dir, 'model');
  beforeAll(async () => {
    await writeRandomModelFolder({ preset: 'tiny', outDir: modelDir, seed: 1 });
  });

  it('writes a PEFT adapter on the target modules, B zero by default and drawn with bStd', async () => {
    const settings = { modelDir, rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'], seed: 5 };
    const fresh = await writeLoraAdapterFolder({ ...settings, outDir: join(dir, 'fresh') });
    expect(fresh.matrices.size).toBe(4);
    expect([...fresh.matrices.values()].every((matrices) => matrices.b.every((value) => value === 0))).toBe(true);

    const drawn = await writeLoraAdapterFolder({ ...settings, outDir: join(dir, 'drawn'), bStd: 0.1 });
    const bValues = [...drawn.matrices.values()].flatMap((matrices) => Array.from(matrices.b));
    const std = Math.sqrt(bValues.reduce((sum, value) => sum + value * value, 0) / bValues.length);
    expect(std).toBeGreaterThan(0.05);
    expect(std).toBeLessThan(0.2);
    // A is drawn as for the fresh adapter; the saved folder loads back as written.
    expect(drawn.matrices.get('model.layers.0.self_attn.q_proj')!.a).toEqual(fresh.matrices.get('model.layers.0.self_attn.q_proj')!.a);
    const loaded = await loadLoraAdapter(join(dir, 'drawn'), (await loadModel(modelDir)).config);
    expect(loaded.config).toMatchObject({ rank: 2, alpha: 4 });
    expect(loaded.matrices.get('model.layers.1.self_attn.v_proj')!.b).toEqual(drawn.matrices.get('model.layers.1.self_attn.v_proj')!.b);
  });

  it('names a target module that is not a linear module, in the caller\'s words', async () => {
    const settings = { modelDir, outDir: join(dir, 'bad'), rank: 2, alpha: 4, targetModules: ['q_proj', 'attn'], seed: 0 };
    await expect(writeLoraAdapterFolder(settings)).rejects.toThrow('targetModules has "attn"; expected names among q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj.');
    await expect(writeLoraAdapterFolder({ ...settings, wording: { targetModules: '--targets' } })).rejects.toThrow('--targets has "attn"');
  });
});
