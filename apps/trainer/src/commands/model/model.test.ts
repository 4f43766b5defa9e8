import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel, referenceCompletionLogprobs } from '@agentflow/models';
import { beforeAll, describe, expect, it } from 'vitest';

const cli = join(__dirname, '..', '..', '..', 'dist', 'cli.js');

function agentflow(...args: string[]) {
  const result = spawnSync('node', [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('agentflow model', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentflow-model-'));
  const modelDir = join(dir, 'model');
  const adapterDir = join(dir, 'adapter');
  const input = join(dir, 'input.json');
  const batch = { prompt_ids: [[257, 104, 105], [10]], completion_ids: [[106, 107], [108, 109, 110]] };

  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` before the CLI tests.`);
    writeFileSync(input, JSON.stringify(batch));
  });

  it('init writes a complete HF folder; logprobs prints the reference log-probs; grad prints PEFT keys', async () => {
    const init = agentflow('model', 'init', '--preset', 'tiny', '--out', modelDir, '--seed', '3');
    expect(init.status, init.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8')).architectures).toEqual(['Qwen3ForCausalLM']);
    for (const file of ['model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) expect(existsSync(join(modelDir, file))).toBe(true);

    const scored = agentflow('model', 'logprobs', '--model', modelDir, '--input', input, '--device', 'cpu');
    expect(scored.status, scored.stderr).toBe(0);
    const { logprobs } = JSON.parse(scored.stdout) as { logprobs: number[][] };
    const model = await loadModel(modelDir);
    batch.prompt_ids.forEach((prompt, row) => {
      const expected = referenceCompletionLogprobs(model.config, model.weights, prompt, batch.completion_ids[row]!);
      expected.forEach((value, index) => {
        expect(Math.abs(logprobs[row]![index]! - value)).toBeLessThan(1e-4);
      });
    });

    const adapter = agentflow('model', 'init-adapter', '--model', modelDir, '--out', adapterDir, '--rank', '2', '--targets', 'q_proj,v_proj', '--b-std', '0.1');
    expect(adapter.status, adapter.stderr).toBe(0);
    const grad = agentflow('model', 'grad', '--model', modelDir, '--adapter', adapterDir, '--input', input, '--device', 'cpu');
    expect(grad.status, grad.stderr).toBe(0);
    const result = JSON.parse(grad.stdout) as { loss: number; grads: Record<string, number[]> };
    const withAdapter = JSON.parse(agentflow('model', 'logprobs', '--model', modelDir, '--adapter', adapterDir, '--input', input, '--device', 'cpu').stdout) as { logprobs: number[][] };
    const meanNll = -withAdapter.logprobs.flat().reduce((sum, value) => sum + value, 0) / 5;
    expect(Math.abs(result.loss - meanNll)).toBeLessThan(1e-5);
    expect(result.grads['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight']).toHaveLength(2 * 64);
    expect(result.grads['base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight']).toHaveLength(32 * 2);
    expect(Object.keys(result.grads)).toHaveLength(8);
  });

  it('reports a bad input file and a missing model folder clearly', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ prompt_ids: [[1]], completion_ids: [] }));
    const mismatch = agentflow('model', 'logprobs', '--model', modelDir, '--input', bad);
    expect(mismatch.status).toBe(2);
    expect(mismatch.stderr).toMatch(/prompt_ids has 1 rows but completion_ids has 0/);
    const missing = agentflow('model', 'logprobs', '--model', join(dir, 'nope'), '--input', input);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/No config.json in model folder/);
  });
});
