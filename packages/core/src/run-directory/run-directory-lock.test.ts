import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentFlowError } from '../errors/agentflow-error';
import { processStartTime } from './process-start-time';
import { acquireRunDirectoryLock, type RunDirectoryLockOwner } from './run-directory-lock';

// One writer per run directory (issue 33: two `--resume` of one directory both appended). The
// holder in the first test is another process running this file (AGENTFLOW_LOCK_HOLDER set), so
// the refusal, and the takeover once it is killed with SIGKILL, are those two resumes would see.

const HOLDER = process.env.AGENTFLOW_LOCK_HOLDER;
// The holder is killed before its hooks run: it makes no folder of its own.
const root = HOLDER ? '' : mkdtempSync(join(tmpdir(), 'run-lock-'));
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});
let runs = 0;
const runDirectory = () => join(root, `run-${runs++}`);
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function refusal(acquire: () => unknown): AgentFlowError {
  try {
    acquire();
  } catch (error) {
    expect(AgentFlowError.isInstance(error), String(error)).toBe(true);
    return error as AgentFlowError;
  }
  throw new Error('expected the lock to be refused');
}

function writeLock(directory: string, owner: RunDirectoryLockOwner): void {
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, '.lock'), JSON.stringify(owner));
}

/** Waits for `path` to exist (the child's signal), up to `ms`. */
function waitFor(path: string, ms: number): boolean {
  const deadline = Date.now() + ms;
  while (!existsSync(path) && Date.now() < deadline) sleep(50);
  return existsSync(path);
}

describe.skipIf(HOLDER)('acquireRunDirectoryLock', () => {
  it('refuses a second writer while another process holds the directory, naming its pid; takes the lock over once that process is killed', () => {
    const directory = runDirectory();
    const ready = join(root, 'holder-ready.json');
    const repository = fileURLToPath(new URL('../../../../', import.meta.url));
    const child: ChildProcess = spawn(process.execPath, [join(repository, 'node_modules/vitest/vitest.mjs'), 'run', fileURLToPath(import.meta.url)], {
      cwd: repository,
      env: { ...process.env, AGENTFLOW_LOCK_HOLDER: JSON.stringify({ directory, ready }) },
      stdio: 'ignore',
    });
    let holderPid: number | undefined;
    try {
      expect(waitFor(ready, 25_000), 'the holder process did not take the lock within 25 s').toBe(true);
      const holder = JSON.parse(readFileSync(ready, 'utf8')) as RunDirectoryLockOwner;
      holderPid = holder.pid;
      expect(holder.pid).not.toBe(process.pid);
      const started = performance.now();
      const error = refusal(() => acquireRunDirectoryLock(directory, { purpose: 'agentflow run --resume' }));
      expect(performance.now() - started).toBeLessThan(1000);
      expect(error.code).toBe('RUN_LOCKED');
      expect(error.message).toBe(
        `${directory} is in use: pid ${holder.pid} on ${hostname()} (agentflow run --resume) has held ${join(directory, '.lock')} since ${holder.acquiredAt}, ` +
          `and a second writer would duplicate its records. Wait for that process to end or stop it (kill ${holder.pid}), then run again; ` +
          'a lock whose process has ended is taken over without deleting it.',
      );
      expect(error.details).toMatchObject({ directory, holder: { pid: holder.pid, purpose: 'agentflow run --resume' } });

      // kill -9 runs no exit hook: the lock stays, naming a dead process.
      process.kill(holder.pid, 'SIGKILL');
      const deadline = Date.now() + 10_000;
      while (processStartTime(holder.pid) === holder.startTime && Date.now() < deadline) sleep(20);
      const lock = acquireRunDirectoryLock(directory, { purpose: 'agentflow run --resume' });
      expect(lock.tookOverFrom).toMatchObject({ pid: holder.pid, purpose: 'agentflow run --resume' });
      expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toEqual(lock.owner);
      lock.release();
      expect(readdirSync(directory)).toEqual([]);
    } finally {
      if (holderPid !== undefined && processStartTime(holderPid) !== undefined) process.kill(holderPid, 'SIGKILL');
      child.kill('SIGKILL');
    }
  }, 45_000);

  it('takes over a lock whose pid is alive but belongs to a process started later (a reused pid)', () => {
    const directory = runDirectory();
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const startTime = processStartTime(sleeper.pid!)!;
      const owner = { pid: sleeper.pid!, startTime: String(Number(startTime) - 1), hostname: hostname(), purpose: 'agentflow run', acquiredAt: '2025-01-01T00:00:00.000Z' };
      writeLock(directory, owner);
      const lock = acquireRunDirectoryLock(directory, { purpose: 'agentflow train-prm' });
      expect(lock.tookOverFrom).toEqual(owner);
      expect(lock.owner).toMatchObject({ pid: process.pid, startTime: processStartTime(process.pid), purpose: 'agentflow train-prm' });
      lock.release();
      // The same pid with its true start time is a live holder.
      writeLock(directory, { ...owner, startTime });
      expect(refusal(() => acquireRunDirectoryLock(directory, { purpose: 'x' })).message).toContain(`pid ${sleeper.pid} on ${hostname()} (agentflow run) has held`);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('takes over the lock of a pid that no longer exists, and creates the directory of a new run', () => {
    const directory = runDirectory();
    const gone = Number(execFileSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).trim());
    writeLock(directory, { pid: gone, startTime: '12345', hostname: hostname(), purpose: 'agentflow run', acquiredAt: '2025-01-01T00:00:00.000Z' });
    const lock = acquireRunDirectoryLock(directory, { purpose: 'agentflow run --resume', now: () => new Date('2025-06-01T12:00:00Z') });
    expect(lock.tookOverFrom?.pid).toBe(gone);
    expect(lock.owner.acquiredAt).toBe('2025-06-01T12:00:00.000Z');
    lock.release();
    const fresh = acquireRunDirectoryLock(join(runDirectory(), 'nested'), { purpose: 'agentflow run' });
    expect(fresh.tookOverFrom).toBeUndefined();
    fresh.release();
  });

  it('release removes the lock only while it is ours; the exit hook releases it too; the same process cannot take it twice', () => {
    const directory = runDirectory();
    const before = process.listeners('exit');
    const lock = acquireRunDirectoryLock(directory, { purpose: 'agentflow run' });
    const hooks = process.listeners('exit').filter((listener) => !before.includes(listener));
    expect(hooks).toHaveLength(1);
    expect(refusal(() => acquireRunDirectoryLock(directory, { purpose: 'agentflow eval' })).message).toBe(
      `${directory} is already locked by this process (agentflow run) since ${lock.owner.acquiredAt}; release that lock before taking it again.`,
    );
    hooks[0]!(0);
    expect(existsSync(lock.path)).toBe(false);
    expect(process.listeners('exit')).not.toContain(hooks[0]);
    lock.release();

    const second = acquireRunDirectoryLock(directory, { purpose: 'agentflow run' });
    const stranger = { ...second.owner, pid: 1, acquiredAt: '2025-01-01T00:00:00.000Z' };
    writeLock(directory, stranger);
    second.release();
    expect(JSON.parse(readFileSync(second.path, 'utf8'))).toEqual(stranger);
  });

  it('refuses a lock of another host, a lock file it cannot read and a FIFO, each naming what to do', () => {
    const directory = runDirectory();
    writeLock(directory, { pid: 4_000_000, startTime: null, hostname: 'build-7', purpose: 'agentflow run', acquiredAt: '2025-01-01T00:00:00.000Z' });
    const lockPath = join(directory, '.lock');
    expect(refusal(() => acquireRunDirectoryLock(directory, { purpose: 'x' })).message).toBe(
      `${directory} is locked by pid 4000000 on build-7 (agentflow run) since 2025-01-01T00:00:00.000Z; from ${hostname()} it cannot be checked whether that process still runs. If it has ended, delete ${lockPath} and run again.`,
    );
    writeFileSync(lockPath, 'garbage');
    const unreadable = refusal(() => acquireRunDirectoryLock(directory, { purpose: 'x' }));
    expect(unreadable.code).toBe('RUN_LOCKED');
    expect(unreadable.message).toBe(
      `${lockPath} holds "garbage", not a lock this version of AgentFlow wrote ({pid, startTime, hostname, purpose, acquiredAt}); if no other process writes to ${directory}, delete ${lockPath} and run again.`,
    );
    rmSync(lockPath);
    execFileSync('mkfifo', [lockPath]);
    expect(refusal(() => acquireRunDirectoryLock(directory, { purpose: 'x' })).message).toBe(`${lockPath} is a FIFO; expected a regular file (a run directory lock).`);
    expect(readdirSync(directory)).toEqual(['.lock']);
  });
});

describe.runIf(HOLDER)('a process holding a run directory (child)', () => {
  it('holds the lock until it is killed', () => {
    const { directory, ready } = JSON.parse(HOLDER!) as { directory: string; ready: string };
    const lock = acquireRunDirectoryLock(directory, { purpose: 'agentflow run --resume' });
    writeFileSync(ready, JSON.stringify(lock.owner));
    // The parent kills this process; the bound only keeps a lost child from living on.
    sleep(30_000);
  }, 40_000);
});
