import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('init writes a model folder, init-adapter an adapter; logprobs and grad print their JSON', () => {
    // The numbers themselves (the reference log-probs, the gradients' keys and shapes) are @agentflow/models' tests.
    const init = agentflow('model', 'init', '--preset', 'tiny', '--out', modelDir, '--seed', '3');
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toMatch(new RegExp(`^wrote tiny model \\(\\d+ parameters, vocabulary 259, float32, byte-level tokenizer\\) to ${modelDir}\n$`));
    expect(JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8')).architectures).toEqual(['Qwen3ForCausalLM']);
    for (const file of ['model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) expect(existsSync(join(modelDir, file))).toBe(true);

    const scored = agentflow('model', 'logprobs', '--model', modelDir, '--input', input, '--device', 'cpu');
    expect(scored.status, scored.stderr).toBe(0);
    expect(Object.keys(JSON.parse(scored.stdout))).toEqual(['logprobs']);
    const withEntropy = JSON.parse(agentflow('model', 'logprobs', '--model', modelDir, '--input', input, '--device', 'cpu', '--entropy').stdout) as { logprobs: number[][]; entropy: number[][] };
    expect(withEntropy.logprobs).toEqual(JSON.parse(scored.stdout).logprobs);
    expect(withEntropy.entropy.map((row) => row.length)).toEqual([2, 3]);

    const badTargets = agentflow('model', 'init-adapter', '--model', modelDir, '--out', join(dir, 'bad-adapter'), '--targets', 'q_proj,attn');
    expect(badTargets.status).toBe(2);
    expect(badTargets.stderr).toMatch(/--targets has "attn"; expected names among q_proj, k_proj/);
    const adapter = agentflow('model', 'init-adapter', '--model', modelDir, '--out', adapterDir, '--rank', '2', '--targets', 'q_proj,v_proj', '--b-std', '0.1');
    expect(adapter.status, adapter.stderr).toBe(0);
    expect(adapter.stdout).toBe(`wrote a rank-2 adapter on q_proj, v_proj (4 modules) to ${adapterDir}\n`);
    const grad = agentflow('model', 'grad', '--model', modelDir, '--adapter', adapterDir, '--input', input, '--device', 'cpu');
    expect(grad.status, grad.stderr).toBe(0);
    const result = JSON.parse(grad.stdout) as { loss: number; grads: Record<string, number[]> };
    const withAdapter = JSON.parse(agentflow('model', 'logprobs', '--model', modelDir, '--adapter', adapterDir, '--input', input, '--device', 'cpu').stdout) as { logprobs: number[][] };
    const meanNll = -withAdapter.logprobs.flat().reduce((sum, value) => sum + value, 0) / 5;
    expect(Math.abs(result.loss - meanNll)).toBeLessThan(1e-5);
    expect(Object.keys(result.grads)).toHaveLength(8);
    expect(result.grads['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight']).toHaveLength(2 * 64);
  });

  it('init words its refusals with its options: --vocab-size, --out, --dtype', () => {
    // The folder itself (bf16, the copied tokenizer and its EOS) is @agentflow/models' writeRandomModelFolder test.
    const tooSmall = agentflow('model', 'init', '--preset', 'tiny', '--out', join(dir, 'too-small'), '--tokenizer', qwen3TokenizerDir());
    expect(tooSmall.status).toBe(2);
    expect(tooSmall.stderr).toMatch(/has 151669 ids, more than the vocabulary size 259; pass --vocab-size 151669 or more/);
    const busy = agentflow('model', 'init', '--out', modelDir);
    expect(busy.status).toBe(2);
    expect(busy.stderr).toContain(`--out ${modelDir} is not empty; choose a new folder.`);
    const badDtype = agentflow('model', 'init', '--out', join(dir, 'bad-dtype'), '--dtype', 'int8');
    expect(badDtype.status).toBe(2);
    expect(badDtype.stderr).toMatch(/--dtype must be one of float32, bfloat16, float16, got "int8"/);
  });

  it('reports a bad input file and a missing model folder clearly', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ prompt_ids: [[1]], completion_ids: [] }));
    const mismatch = agentflow('model', 'logprobs', '--model', modelDir, '--input', bad);
    expect(mismatch.status).toBe(2);
    expect(mismatch.stderr).toMatch(/prompt_ids has 1 rows but completion_ids has 0/);
    const noTokens = join(dir, 'no-tokens.json');
    writeFileSync(noTokens, JSON.stringify({ prompt_ids: [[1]], completion_ids: [[]] }));
    const empty = agentflow('model', 'grad', '--model', modelDir, '--adapter', adapterDir, '--input', noTokens, '--device', 'cpu');
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain(`--input ${noTokens} has no completion tokens to take a loss over.`);
    const missing = agentflow('model', 'logprobs', '--model', join(dir, 'nope'), '--input', input);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/No config.json in model folder/);
  });
});
