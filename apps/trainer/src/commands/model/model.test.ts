import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel, loadTokenizer, referenceCompletionLogprobs } from '@agentflow/models';
import { beforeAll, describe, expect, it } from 'vitest';
import { qwen3TokenizerDir } from '@agentflow/models/testing';

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

  it('init --dtype bfloat16 --tokenizer --vocab-size writes a Qwen3-style folder with the copied tokenizer', async () => {
    const qwen3Dir = join(dir, 'qwen3');
    const tooSmall = agentflow('model', 'init', '--preset', 'tiny', '--out', join(dir, 'too-small'), '--tokenizer', qwen3TokenizerDir());
    expect(tooSmall.status).toBe(2);
    expect(tooSmall.stderr).toMatch(/has 151669 ids, more than the vocabulary size 259; pass --vocab-size 151669 or more/);
    const init = agentflow('model', 'init', '--preset', 'tiny', '--out', qwen3Dir, '--dtype', 'bfloat16', '--tokenizer', qwen3TokenizerDir(), '--vocab-size', '151936');
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/vocabulary 151936, bfloat16, tokenizer copied from/);
    const config = JSON.parse(readFileSync(join(qwen3Dir, 'config.json'), 'utf8'));
    // The EOS follows the copied tokenizer's eos_token, <|im_end|>.
    expect(config).toMatchObject({ vocab_size: 151936, torch_dtype: 'bfloat16', eos_token_id: 151645 });
    expect(readFileSync(join(qwen3Dir, 'tokenizer.json')).equals(readFileSync(join(qwen3TokenizerDir(), 'tokenizer.json')))).toBe(true);
    const model = await loadModel(qwen3Dir);
    expect(model.weights.get('model.embed_tokens.weight')!.shape).toEqual([151936, 64]);
    const tokenizer = await loadTokenizer(qwen3Dir);
    expect(tokenizer.encode('What is 2+2? <|im_start|>')).toEqual([3838, 374, 220, 17, 10, 17, 30, 220, 151644]);
    const badDtype = agentflow('model', 'init', '--out', join(dir, 'bad-dtype'), '--dtype', 'int8');
    expect(badDtype.status).toBe(2);
    expect(badDtype.stderr).toMatch(/--dtype must be float32, bfloat16 or float16, got "int8"/);
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
