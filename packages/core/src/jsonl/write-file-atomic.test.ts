import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { AgentFlowError } from '../errors/agentflow-error';
import { diskFullError, isDiskFullError } from './disk-full';
import { appendJsonl, readJsonl } from './jsonl';
import { writeFileAtomic } from './write-file-atomic';

// A full disk while a run writes (issue 33): on a 1 MiB tmpfs, a write that does not fit is
// DISK_FULL naming the folder and the bytes, the previous version stays, no temporary file is
// left, and once space is freed the same write succeeds. Mounting needs root; elsewhere the
// full-disk tests are skipped with the reason.

const root = mkdtempSync(join(tmpdir(), 'write-atomic-'));
const disk = join(root, 'small-disk');
let mountFailure: string | undefined = 'not mounted yet';

beforeAll(() => {
  mkdirSync(disk);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', disk], { stdio: 'pipe' });
    mountFailure = undefined;
  } catch (error) {
    mountFailure = `mount -t tmpfs failed (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); a full disk needs root to simulate`;
  }
});

afterAll(() => {
  if (mountFailure === undefined) execFileSync('umount', ['-l', disk]);
  rmSync(root, { recursive: true, force: true });
});

function needsSmallDisk(context: TestContext): void {
  if (mountFailure === undefined) return;
  console.warn(`skipped: ${mountFailure}`);
  context.skip(mountFailure);
}

function caught(write: () => void): AgentFlowError {
  try {
    write();
  } catch (error) {
    expect(AgentFlowError.isInstance(error), String(error)).toBe(true);
    return error as AgentFlowError;
  }
  throw new Error('expected the write to fail');
}

describe('writeFileAtomic', () => {
  it('replaces a file whole and leaves no temporary file, also when the rename fails', () => {
    const dir = join(root, 'plain');
    const path = join(dir, 'state.json');
    writeFileAtomic(path, '{"v":1}');
    writeFileAtomic(path, new TextEncoder().encode('{"v":2}'));
    expect(readFileSync(path, 'utf8')).toBe('{"v":2}');
    mkdirSync(join(dir, 'folder'));
    expect(() => writeFileAtomic(join(dir, 'folder'), 'x')).toThrow(/EISDIR|EEXIST|ENOTEMPTY/);
    expect(readdirSync(dir).sort()).toEqual(['folder', 'state.json']);
  });

  it('is DISK_FULL on a full disk, naming the folder and the bytes; the previous version stays and the write succeeds once space is freed', (context) => {
    needsSmallDisk(context);
    const path = join(disk, 'state.json');
    writeFileAtomic(path, '{"stages":{}}');
    const error = caught(() => writeFileAtomic(path, Buffer.alloc(2 * 1024 * 1024, 0x20)));
    expect(error.code).toBe('DISK_FULL');
    expect(error.message).toBe(
      `No space left on the device (ENOSPC) of ${disk} while writing 2 MiB (2097152 bytes) to ${path}; the previous version of ${path} is intact. ` +
        'Free at least that much space, then run again with --resume to continue where it stopped.',
    );
    expect(error.details).toMatchObject({ directory: disk, bytes: 2097152, errno: 'ENOSPC' });
    expect(readFileSync(path, 'utf8')).toBe('{"stages":{}}');
    expect(readdirSync(disk)).toEqual(['state.json']);

    // A disk filled by something else; freed, the same write goes through.
    const filler = join(disk, 'filler.bin');
    expect(() => writeFileSync(filler, Buffer.alloc(1024 * 1024))).toThrow(/ENOSPC/);
    const state = JSON.stringify({ stages: { collect: { finishedAt: 'now', result: 'x'.repeat(200_000) } } });
    expect(caught(() => writeFileAtomic(path, state)).code).toBe('DISK_FULL');
    expect(readdirSync(disk).sort()).toEqual(['filler.bin', 'state.json']);
    rmSync(filler);
    writeFileAtomic(path, state);
    expect(readFileSync(path, 'utf8')).toBe(state);
    expect(readdirSync(disk)).toEqual(['state.json']);
    rmSync(path);
  });
});

describe('appendJsonl on a full disk', () => {
  it('is DISK_FULL with the records already written intact and no partial record left', (context) => {
    needsSmallDisk(context);
    const path = join(disk, 'trajectories.jsonl');
    appendJsonl(path, [{ id: 1 }, { id: 2 }]);
    const size = statSync(path).size;
    const error = caught(() => appendJsonl(path, [{ id: 3, text: 'x'.repeat(2 * 1024 * 1024) }]));
    expect(error.code).toBe('DISK_FULL');
    expect(error.message).toContain(`to ${path}; the records already in ${path} are intact.`);
    expect(statSync(path).size).toBe(size);
    expect(readJsonl(path)).toEqual([{ id: 1 }, { id: 2 }]);
    appendJsonl(path, [{ id: 3 }]);
    expect(readJsonl(path)).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    rmSync(path);
  });
});

describe('diskFullError', () => {
  it('maps ENOSPC and EDQUOT caught anywhere, and names an inner DISK_FULL again as the outer write', () => {
    const quota = Object.assign(new Error('EDQUOT: disk quota exceeded, write'), { code: 'EDQUOT' });
    expect(isDiskFullError(quota)).toBe(true);
    expect(isDiskFullError(Object.assign(new Error('EACCES'), { code: 'EACCES' }))).toBe(false);
    const error = diskFullError('/runs/a/models/policy', 3 * 1024 ** 3, quota, { kept: 'the previous folder /runs/a/models/policy is intact' });
    expect(error.message).toBe(
      'Disk quota exceeded (EDQUOT) of /runs/a/models while writing 3 GiB (3221225472 bytes) to /runs/a/models/policy; ' +
        'the previous folder /runs/a/models/policy is intact. Free at least that much space or raise the quota, then run again with --resume to continue where it stopped.',
    );
    expect(isDiskFullError(error)).toBe(true);
    const outer = diskFullError('/runs/a/models', 4096, error, { kept: 'nothing changed' });
    expect(outer.message).toMatch(/^Disk quota exceeded \(EDQUOT\) of \/runs\/a while writing 4 KiB \(4096 bytes\) to \/runs\/a\/models; nothing changed\./);
    expect(outer.cause).toBe(error);
  });
});
