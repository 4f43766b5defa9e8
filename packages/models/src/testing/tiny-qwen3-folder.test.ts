import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTokenizer } from '../tokenizer/load-tokenizer';
import { loadModel } from '../weights/model-folder';
import { writeTinyQwen3Folder } from './index';

describe('writeTinyQwen3Folder', () => {
  it('writes a bf16 Qwen3 folder with the real tokenizer that loads with thinking off', async () => {
    const dir = await writeTinyQwen3Folder(join(mkdtempSync(join(tmpdir(), 'tiny-qwen3-')), 'Qwen3-tiny'), { seed: 3, hiddenSize: 16, layers: 1 });
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ vocab_size: 151936, hidden_size: 16, num_hidden_layers: 1, bos_token_id: 151643, eos_token_id: 151645, tie_word_embeddings: true, torch_dtype: 'bfloat16' });
    const model = await loadModel(dir);
    expect(model.weights.get('model.embed_tokens.weight')!.shape).toEqual([151936, 16]);
    const tokenizer = await loadTokenizer(dir, { chatTemplateKwargs: { enable_thinking: false } });
    expect(tokenizer.encode('What is 2+2? <|im_start|>')).toEqual([3838, 374, 220, 17, 10, 17, 30, 220, 151644]);
    expect(tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }])).toMatch(/<\|im_start\|>assistant\n<think>\n\n<\/think>\n\n$/);
    await expect(writeTinyQwen3Folder(join(dir, 'bad'), { hiddenSize: 30 })).rejects.toThrow(/multiple of 4/);
  });
});
