import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandomModel, getModelPreset, saveModelFolder, toHfConfig } from '@agentflow/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `agentflow run` as a user runs it, on configs and run directories that cannot run: exit 2
// and one error naming the file, the key and what was expected, before any work starts.

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'cli-config-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function agentflow(...args: string[]) {
  const result = spawnSync('node', [cli, ...args], { encoding: 'utf8', timeout: 60_000, cwd: dir });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe('agentflow run on configs that cannot run', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm --filter @agentflow/trainer build\` first.`);
  });

  it.each([
    [
      'a directory',
      () => {
        mkdirSync(join(dir, 'folder.yaml'));
        return join(dir, 'folder.yaml');
      },
      /folder\.yaml: is a directory; expected a YAML or JSON config file\./,
    ],
    ['not UTF-8', () => file('latin1.yaml', Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0xff, 0x0a])), /latin1\.yaml: not UTF-8 text: byte 0xff at offset 6 \(line 1\)/],
    ['100,000 deep', () => file('deep.json', `${'['.repeat(100_000)}${']'.repeat(100_000)}`), /deep\.json: lists and objects nest more than 64 levels deep/],
    ['trainTasks: 1e12', () => file('tasks.yaml', 'task:\n  kind: world\n  trainTasks: 1e12\n'), /tasks\.yaml: task\.trainTasks: Too big: expected number to be <=100000, found 1000000000000/],
    ['hiddenSize: 1e9', () => file('hidden.yaml', 'task:\n  kind: world\n  planner: { hiddenSize: 1e9 }\n'), /hidden\.yaml: task\.planner\.hiddenSize: Too big: expected number to be <=4096/],
  ])('--dry-run refuses a config that is %s with exit 2', (_, make, expected) => {
    const { status, stderr } = agentflow('run', '--config', make(), '--dry-run');
    expect(stderr).toMatch(expected);
    expect(stderr).not.toMatch(/RangeError|SyntaxError|ZodError|\n {4}at /);
    expect(status).toBe(2);
  });

  it('refuses policy.maxSteps below the demonstrations, in the dry run and before a run starts', () => {
    const path = file('steps.yaml', 'policy:\n  maxSteps: 2\n');
    const dry = agentflow('run', '--config', path, '--dry-run');
    expect(dry.stdout).toMatch(/✘ runnable settings \(policy\.maxSteps\): 2 planner decisions are fewer than the \d+ the demonstration of train-\d+ takes/);
    expect(dry.status).toBe(2);
    const out = join(dir, 'steps-run');
    const run = agentflow('run', '--config', path, '--out', out, '--quiet');
    expect(run.stderr).toMatch(/steps\.yaml: policy\.maxSteps: 2 planner decisions are fewer than the \d+/);
    expect(run.status).toBe(2);
    expect(existsSync(out)).toBe(false);
  });

  it('refuses --resume of a run directory whose config.json or state.json is corrupt, with exit 2', () => {
    const out = join(dir, 'corrupt');
    mkdirSync(out);
    writeFileSync(join(out, 'config.json'), '{"seed": "x"}');
    writeFileSync(join(out, 'state.json'), '{"version": 1, "createdAt": "now", "stages": {}}');
    let result = agentflow('run', '--resume', out, '--quiet');
    expect(result.stderr).toContain(`${join(out, 'config.json')}: seed: Invalid input: expected number, received string, found "x"`);
    expect(result.status).toBe(2);
    writeFileSync(join(out, 'config.json'), '{}');
    writeFileSync(join(out, 'state.json'), '{"version": 1, "createdAt": "now", "stages": {"collect": []}}');
    result = agentflow('run', '--resume', out, '--quiet');
    expect(result.stderr).toContain(`${join(out, 'state.json')}: stages.collect: Invalid input: expected object, received array, found []`);
    expect(result.status).toBe(2);
  });

  it('checks a model folder in the dry run from its headers, and refuses NaN weights by name instead of printing null', async () => {
    const config = { ...getModelPreset('tiny'), hiddenSize: 16, intermediateSize: 16, headDim: 8, numHiddenLayers: 1 };
    const model = createRandomModel(config, 2);
    const folder = join(dir, 'layers');
    await saveModelFolder(folder, model);
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ ...toHfConfig(config), num_hidden_layers: 1e9 }));
    const path = file('model-folder.yaml', `task: { kind: world }\npolicy:\n  model: { path: ${folder} }\n`);
    const dry = agentflow('run', '--config', path, '--dry-run');
    expect(dry.stdout).toMatch(/✘ planner model: Invalid Qwen3 config in .*config\.json: num_hidden_layers: Too big: expected number to be <=1024/);
    expect(dry.status).toBe(2);

    model.weights.get('model.norm.weight')!.data[3] = Number.NaN;
    await saveModelFolder(join(dir, 'nan'), model);
    const input = file('batch.json', JSON.stringify({ prompt_ids: [[257, 104]], completion_ids: [[106, 107]] }));
    const scored = agentflow('model', 'logprobs', '--model', join(dir, 'nan'), '--input', input, '--device', 'cpu');
    expect(scored.stdout).not.toContain('null');
    expect(scored.stderr).toMatch(/Weight model\.norm\.weight in .*nan has the value NaN at index 3; every weight must be finite/);
    expect(scored.status).not.toBe(0);
  });
});
