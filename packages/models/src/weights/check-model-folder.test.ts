import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkModelFolder } from './check-model-folder';
import { writeRandomModelFolder } from './random-model-folder';

describe('checkModelFolder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'check-model-folder-'));

  it('finds the plan of a folder that will load, from the headers', async () => {
    const modelDir = join(dir, 'model');
    const { parameters } = await writeRandomModelFolder({ preset: 'tiny', outDir: modelDir, seed: 0 });
    const check = await checkModelFolder(modelDir);
    expect(check).toEqual({ ok: true, plan: expect.objectContaining({ parameters, float32Bytes: 4 * parameters }) });
  });

  it('names a missing folder, the files a folder lacks, and what the loader refuses, without throwing', async () => {
    expect(await checkModelFolder(join(dir, 'nope'))).toEqual({ ok: false, problem: `model folder ${join(dir, 'nope')} does not exist` });
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    writeFileSync(join(empty, 'tokenizer.json'), '{}');
    expect(await checkModelFolder(empty)).toEqual({ ok: false, problem: `model folder ${empty} lacks config.json, tokenizer_config.json, *.safetensors` });

    const broken = join(dir, 'broken');
    await writeRandomModelFolder({ preset: 'tiny', outDir: broken, seed: 0 });
    rmSync(join(broken, 'model.safetensors'));
    writeFileSync(join(broken, 'model.safetensors'), 'not safetensors');
    const check = await checkModelFolder(broken);
    expect(check.ok).toBe(false);
    expect(!check.ok && check.problem).toMatch(/model\.safetensors/);
  });
});
