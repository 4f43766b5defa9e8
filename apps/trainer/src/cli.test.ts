import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const cli = join(__dirname, '..', 'dist', 'cli.js');

function agentflow(...args: string[]) {
  const result = spawnSync('node', [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function configFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'agentflow-cli-')), name);
  writeFileSync(path, content);
  return path;
}

describe('agentflow command line', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` before the CLI tests.`);
  });

  it('--help lists every subcommand', () => {
    const { status, stdout } = agentflow('--help');
    expect(status).toBe(0);
    for (const name of ['run', 'solve', 'collect', 'label', 'train-prm', 'train', 'eval', 'report', 'mcp', 'model', 'dedup']) {
      expect(stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    }
  });

  it('names the unknown key of a bad config and exits 2', () => {
    const path = configFile('bad.yaml', 'seed: 3\nlearning_rat: 0.1\n');
    const { status, stderr } = agentflow('run', '--config', path, '--dry-run');
    expect(status).toBe(2);
    expect(stderr).toContain(`${path}: (root): Unrecognized key: "learning_rat"`);
  });

  it('names the key path, the expected type and the value found for a wrong type', () => {
    const path = configFile('bad.json', JSON.stringify({ seed: 'seven', device: 'tpu' }));
    const { status, stderr } = agentflow('run', '--config', path);
    expect(status).toBe(2);
    expect(stderr).toMatch(/seed: Invalid input: expected number, received string, found "seven"/);
    expect(stderr).toMatch(/device: .*"auto".*found "tpu"/);
  });

  it('reports a missing config file and exits 2', () => {
    const { status, stderr } = agentflow('run', '--config', '/nonexistent/agentflow.yaml');
    expect(status).toBe(2);
    expect(stderr).toContain('/nonexistent/agentflow.yaml: config file not found.');
  });

  it('reports malformed YAML with its position and exits 2', () => {
    const path = configFile('broken.yaml', 'seed: [1, 2\n');
    const { status, stderr } = agentflow('run', '--config', path);
    expect(status).toBe(2);
    expect(stderr).toContain(`${path}: not valid YAML`);
  });

  it('ends quietly with 141 when the reader of its output goes away (agentflow run --json | head -1)', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-pipe-')), 'run');
    const config = join(__dirname, 'pipeline', '__fixtures__', 'short-run.yaml');
    const child = spawn('node', [cli, 'run', '--config', config, '--out', out, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Like `head -1`: read the first line, then close the pipe.
    child.stdout.once('data', () => child.stdout.destroy());
    const status = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(stderr).toBe('');
    expect(status).toBe(141);
  }, 60_000);

  it('an unknown subcommand is a usage error', () => {
    const { status, stderr } = agentflow('frobnicate');
    expect(status).toBe(2);
    expect(stderr).toMatch(/unknown command 'frobnicate'/);
  });
});
