/**
 * A disk that fills up in the middle of `agentflow run` (issue #33): on a small tmpfs, once the
 * warm start has finished, the rest of the disk is taken; the run ends with DISK_FULL naming
 * the directory, and once the space is freed `--resume` finishes the run with nothing lost or
 * repeated. Mounting a tmpfs needs root; elsewhere the test is skipped, saying why.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonl, type Trajectory } from '@agentflow/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'short-run.yaml');
const root = mkdtempSync(join(tmpdir(), 'agentflow-full-disk-'));
const disk = join(root, 'disk');
let mountFailure: string | undefined = 'not mounted yet';

beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
  mkdirSync(disk);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m', 'tmpfs', disk], { stdio: 'pipe' });
    mountFailure = undefined;
  } catch (error) {
    mountFailure = `mount -t tmpfs failed (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); a full disk needs root to simulate`;
  }
});

afterAll(() => {
  if (mountFailure === undefined) execFileSync('umount', ['-l', disk]);
  rmSync(root, { recursive: true, force: true });
});

const stagesOf = (dir: string): Record<string, unknown> => {
  try {
    return (JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { stages: Record<string, unknown> }).stages;
  } catch {
    return {}; // not written yet, or being replaced
  }
};

/** Runs the CLI; `onPoll(out)` is called every 20 ms while it runs. */
function agentflow(args: string[], onPoll?: () => void): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = onPoll ? setInterval(onPoll, 20) : undefined;
    child.on('error', reject);
    child.on('exit', (status) => {
      if (timer) clearInterval(timer);
      resolve({ status, stderr });
    });
  });
}

describe('agentflow run on a disk that fills up', () => {
  it('ends with DISK_FULL naming the directory, and resumes to the end once space is freed', async (context) => {
    if (mountFailure !== undefined) {
      console.warn(`skipped: ${mountFailure}`);
      context.skip(mountFailure);
      return;
    }
    const out = join(disk, 'run');
    const filler = join(disk, 'filler');
    let filled = false;
    const failed = await agentflow(['run', '--config', config, '--out', out, '--quiet'], () => {
      if (filled || !('warm-start' in stagesOf(out))) return;
      filled = true;
      // Everything that is left: the next write of the run finds no space.
      const free = Number(execFileSync('df', ['--output=avail', '-B1', disk], { encoding: 'utf8' }).split('\n')[1]);
      execFileSync('fallocate', ['-l', String(free), filler]);
    });
    expect(filled).toBe(true);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toMatch(/^error \[DISK_FULL\]: No space left on the device \(ENOSPC\) of \S+ while writing .* to \S+; .* intact\. Free at least that much space, then run again with --resume/m);
    expect(failed.stderr).toContain(disk);
    const before = stagesOf(out);
    expect(before.report).toBeUndefined();

    rmSync(filler);
    const resumed = await agentflow(['run', '--resume', out, '--quiet']);
    expect(resumed.stderr).toBe('');
    expect(resumed.status).toBe(0);
    expect(Object.keys(stagesOf(out))).toEqual(expect.arrayContaining(['warm-start', 'collect', 'label', 'train-prm', 'train', 'eval-after', 'report']));
    const ids = readJsonl<Trajectory>(join(out, 'trajectories.jsonl')).map((trajectory) => trajectory.id);
    expect(new Set(ids).size).toBe(ids.length);
    const steps = readJsonl<{ stage: string; step: number }>(join(out, 'metrics.jsonl'))
      .filter((row) => row.stage === 'train')
      .map((row) => row.step);
    expect(steps).toEqual([1, 2]);
  }, 240_000);
});
