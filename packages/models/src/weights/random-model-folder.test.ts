import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { qwen3TokenizerDir } from '../testing/tiny-qwen3-folder';
import { loadTokenizer } from '../tokenizer/load-tokenizer';
import { loadModel } from './model-folder';
import { writeRandomModelFolder } from './random-model-folder';

describe('writeRandomModelFolder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'random-model-folder-'));

  it('writes a complete HF folder of the preset with the byte-level tokenizer, and refuses a folder with files', async () => {
    const outDir = join(dir, 'tiny');
    const written = await writeRandomModelFolder({ preset: 'tiny', outDir, seed: 3 });
    expect(JSON.parse(readFileSync(join(outDir, 'config.json'), 'utf8'))).toMatchObject({ architectures: ['Qwen3ForCausalLM'], torch_dtype: 'float32' });
    for (const file of ['model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) expect(existsSync(join(outDir, file))).toBe(true);
    const model = await loadModel(outDir);
    expect(written.config).toEqual(model.config);
    expect(written.parameters).toBe([...model.weights.values()].reduce((sum, tensor) => sum + tensor.data.length, 0));

    const busy = join(dir, 'busy');
    await writeRandomModelFolder({ preset: 'tiny', outDir: busy, seed: 0 });
    writeFileSync(join(busy, 'notes.txt'), 'keep');
    await expect(writeRandomModelFolder({ preset: 'tiny', outDir: busy, seed: 0 })).rejects.toThrow(`outDir ${busy} is not empty; choose a new folder.`);
    await expect(writeRandomModelFolder({ preset: 'tiny', outDir: busy, seed: 0, wording: { outDir: '--out' } })).rejects.toThrow(`--out ${busy} is not empty`);
  });

  it('copies a tokenizer, takes its eos_token as EOS, and needs a vocabulary that holds its ids', async () => {
    await expect(writeRandomModelFolder({ preset: 'tiny', outDir: join(dir, 'too-small'), seed: 0, tokenizerDir: qwen3TokenizerDir() })).rejects.toThrow(
      /has 151669 ids, more than the vocabulary size 259; pass vocabSize 151669 or more \(Qwen3 checkpoints use 151936\)/,
    );
    await expect(
      writeRandomModelFolder({ preset: 'tiny', outDir: join(dir, 'too-small'), seed: 0, tokenizerDir: qwen3TokenizerDir(), wording: { vocabSize: '--vocab-size' } }),
    ).rejects.toThrow(/pass --vocab-size 151669 or more/);

    const outDir = join(dir, 'qwen3');
    const written = await writeRandomModelFolder({ preset: 'tiny', outDir, seed: 0, dtype: 'bfloat16', tokenizerDir: qwen3TokenizerDir(), vocabSize: 151936 });
    expect(written.config.vocabSize).toBe(151936);
    // The EOS follows the copied tokenizer's eos_token, <|im_end|>.
    expect(JSON.parse(readFileSync(join(outDir, 'config.json'), 'utf8'))).toMatchObject({ vocab_size: 151936, torch_dtype: 'bfloat16', eos_token_id: 151645 });
    expect(readFileSync(join(outDir, 'tokenizer.json')).equals(readFileSync(join(qwen3TokenizerDir(), 'tokenizer.json')))).toBe(true);
    const model = await loadModel(outDir);
    expect(model.weights.get('model.embed_tokens.weight')!.shape).toEqual([151936, 64]);
    const tokenizer = await loadTokenizer(outDir);
    expect(tokenizer.encode('What is 2+2? <|im_start|>')).toEqual([3838, 374, 220, 17, 10, 17, 30, 220, 151644]);
  });
});
