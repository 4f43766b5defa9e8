import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeLoraAdapterFolder } from '../lora/lora-adapter-folder';
import { referenceCompletionLogprobs } from '../reference/reference-forward';
import { loadModel } from '../weights/model-folder';
import { writeRandomModelFolder } from '../weights/random-model-folder';
import { completionNllGradients, scoreCompletions } from './completion-batch-scores';

describe('completion log-probs and NLL gradients from folders', () => {
  const dir = mkdtempSync(join(tmpdir(), 'completion-batch-scores-'));
  const modelDir = join(dir, 'model');
  const adapterDir = join(dir, 'adapter');
  const batch = { promptIds: [[257, 104, 105], [10]], completionIds: [[106, 107], [108, 109, 110]] };

  beforeAll(async () => {
    await writeRandomModelFolder({ preset: 'tiny', outDir: modelDir, seed: 3 });
    await writeLoraAdapterFolder({ modelDir, outDir: adapterDir, rank: 2, alpha: 16, targetModules: ['q_proj', 'v_proj'], seed: 0, bStd: 0.1 });
  });

  it('scores the base model as the float64 reference does, with entropies on request', async () => {
    const scores = await scoreCompletions({ modelDir, batch, device: 'cpu' });
    expect(scores.entropy).toBeUndefined();
    const model = await loadModel(modelDir);
    batch.promptIds.forEach((prompt, row) => {
      referenceCompletionLogprobs(model.config, model.weights, prompt, batch.completionIds[row]!).forEach((value, index) => {
        expect(Math.abs(scores.logprobs[row]![index]! - value)).toBeLessThan(1e-4);
      });
    });
    const withEntropy = await scoreCompletions({ modelDir, batch, device: 'cpu', entropy: true });
    expect(withEntropy.entropy!.map((row) => row.length)).toEqual([2, 3]);
  });

  it("takes the mean NLL under the adapter and returns its gradients by PEFT key; refuses a batch without completion tokens", async () => {
    const { loss, gradients } = await completionNllGradients({ modelDir, adapterDir, batch, device: 'cpu' });
    const withAdapter = await scoreCompletions({ modelDir, adapterDir, batch, device: 'cpu' });
    const meanNll = -withAdapter.logprobs.flat().reduce((sum, value) => sum + value, 0) / 5;
    expect(Math.abs(loss - meanNll)).toBeLessThan(1e-5);
    expect(gradients.get('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')).toHaveLength(2 * 64);
    expect(gradients.get('base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight')).toHaveLength(32 * 2);
    expect(gradients.size).toBe(8);

    const empty = { promptIds: [[1]], completionIds: [[]] };
    await expect(completionNllGradients({ modelDir, adapterDir, batch: empty, device: 'cpu' })).rejects.toThrow('The batch has no completion tokens to take a loss over.');
    await expect(completionNllGradients({ modelDir, adapterDir, batch: empty, device: 'cpu', batchName: '--input x.json' })).rejects.toThrow(
      '--input x.json has no completion tokens to take a loss over.',
    );
  });
});
