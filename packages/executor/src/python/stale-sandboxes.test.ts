import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectCgroups } from './cgroup-limits';
import { createScratchFolder } from './scratch-folder';
import { reapStaleCgroups, reapStaleScratchFolders } from './stale-sandboxes';

// A pid above Linux's pid_max (2^22): no process has it, as for an owner that was killed.
const DEAD = 99_999_999;
const privileged = process.getuid?.() === 0;
const mounted = (path: string) => readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${path} `);

describe('reaping what killed processes left', () => {
  it("removes scratch folders of dead owners (unmounting their tmpfs), and keeps live owners' and unmarked ones", () => {
    const root = mkdtempSync(join(tmpdir(), 'scratch-reap-'));
    const ours = createScratchFolder({ root, name: 'task', maxBytes: 1 << 20, maxFiles: 10, uid: undefined, mount: privileged });
    expect(ours.path).toContain(`-p${process.pid}-`);
    const stale = join(root, `task-p${DEAD}-AbC123`);
    mkdirSync(stale);
    if (privileged) execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'agentflow-scratch', stale]);
    else console.log('not root: the stale folder is a plain folder, not a tmpfs mount');
    writeFileSync(join(stale, 'left.txt'), 'from a killed run');
    const unmarked = join(root, 'legacy-XyZ789');
    mkdirSync(unmarked);
    const report = reapStaleScratchFolders(root);
    expect(report).toEqual({ removed: [stale], left: [] });
    expect(existsSync(stale) || mounted(stale)).toBe(false);
    expect(existsSync(ours.path) && existsSync(unmarked)).toBe(true);
    expect(ours.remove()).toBeUndefined();
  });

  it("kills the processes left in a dead owner's control group and removes the group", async (context) => {
    const provider = detectCgroups();
    const parent = provider.parents.find((folder) => existsSync(join(folder, 'cgroup.procs')));
    if (!parent) {
      console.log(`skipped: no writable cgroup hierarchy here (${JSON.stringify(provider.report)})`);
      context.skip();
      return;
    }
    const stale = join(parent, `agentflow-${DEAD}-1`);
    const live = join(parent, `agentflow-${process.pid}-9999`);
    mkdirSync(stale);
    mkdirSync(live);
    const orphan = spawn('sleep', ['60'], { stdio: 'ignore' });
    const exited = new Promise<string | null>((done) => orphan.once('exit', (_, signal) => done(signal)));
    writeFileSync(join(stale, 'cgroup.procs'), String(orphan.pid));
    const report = reapStaleCgroups([parent]);
    expect(report.removed).toContain(stale);
    expect(report.left).toEqual([]);
    expect(await exited).toBe('SIGKILL');
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    rmdirSync(live);
  });
});
