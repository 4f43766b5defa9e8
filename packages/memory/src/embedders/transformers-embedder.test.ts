import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createTransformersEmbedder } from './transformers-embedder';

const root = mkdtempSync(join(tmpdir(), 'agentflow-embedder-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// A real run needs a transformers.js model folder and @huggingface/transformers installed.
const realModel = process.env.AGENTFLOW_TEST_EMBEDDING_MODEL; // "<modelRoot>/<model>"

describe('createTransformersEmbedder', () => {
  it('names the missing folder instead of trying to download', async () => {
    const error = await createTransformersEmbedder({ modelRoot: root, model: 'all-MiniLM-L6-v2' }).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'NOT_FOUND')).toBe(true);
    expect((error as Error).message).toContain(join(root, 'all-MiniLM-L6-v2'));
    expect((error as Error).message).toMatch(/folder does not exist/);
  });

  it('lists the files a partial folder lacks', async () => {
    mkdirSync(join(root, 'partial'));
    writeFileSync(join(root, 'partial', 'config.json'), JSON.stringify({ hidden_size: 384 }));
    await expect(createTransformersEmbedder({ modelRoot: root, model: 'partial', dtype: 'q8' })).rejects.toThrowError(
      /lacks tokenizer\.json, onnx\/model_quantized\.onnx \(found: config\.json\)/,
    );
  });

  it('says which package to install when @huggingface/transformers cannot load', async () => {
    const folder = join(root, 'complete');
    mkdirSync(join(folder, 'onnx'), { recursive: true });
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ hidden_size: 384 }));
    writeFileSync(join(folder, 'tokenizer.json'), '{}');
    writeFileSync(join(folder, 'onnx', 'model.onnx'), '');
    const error = await createTransformersEmbedder({
      modelRoot: root,
      model: 'complete',
      loadTransformers: () => import(['@huggingface', 'not-installed-here'].join('/')),
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(/Cannot load @huggingface\/transformers.*Install it/);
  });

  it.skipIf(!realModel)('embeds with a real local model (AGENTFLOW_TEST_EMBEDDING_MODEL)', async () => {
    const separator = realModel!.lastIndexOf('/');
    const embedder = await createTransformersEmbedder({ modelRoot: realModel!.slice(0, separator), model: realModel!.slice(separator + 1) });
    const [cat, kitten, tax] = await embedder.embed(['a cat sleeps', 'a kitten naps', 'income tax return']);
    const cosine = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);
    expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, tax!));
  });
  if (!realModel) {
    console.info(
      'transformers embedder: real model run skipped: no local model folder here (set AGENTFLOW_TEST_EMBEDDING_MODEL=<modelRoot>/<model>) and @huggingface/transformers is not a dependency of @agentflow/memory.',
    );
  }
});
