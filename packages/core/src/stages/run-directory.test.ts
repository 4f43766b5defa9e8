import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunEvent } from '../schemas/run-event';
import { describe, expect, it } from 'vitest';
import { openRunDirectory } from './run-directory';
import { runStages, type Stage } from './stage-ledger';

describe('a run directory with runStages', () => {
  it('skips finished stages on resume and re-runs the interrupted one', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'agentflow-run-')), 'run');
    const calls: string[] = [];
    let failOnce = true;
    const stages: Array<Stage<object>> = [
      { name: 'collect', run: async () => { calls.push('collect'); return { trajectories: 3 }; } },
      {
        name: 'train',
        run: async () => {
          calls.push('train');
          if (failOnce) {
            failOnce = false;
            throw new Error('killed');
          }
          return 'trained';
        },
      },
    ];
    const events: RunEvent[] = [];
    await expect(runStages(stages, openRunDirectory(dir).ledger, {}, (e) => events.push(e))).rejects.toThrow('killed');
    const resumed = openRunDirectory(dir, { mustExist: true });
    await runStages(stages, resumed.ledger, {}, (e) => events.push(e));
    expect(calls).toEqual(['collect', 'train', 'train']);
    expect(resumed.stageResult('collect')).toEqual({ trajectories: 3 });
    expect(resumed.stageResult('train')).toBe('trained');
    expect(events.filter((e) => e.type === 'stage-start').map((e) => (e as { stage: string }).stage)).toEqual(['collect', 'train', 'train']);
  });

  it('refuses to resume a folder that is not a run', () => {
    expect(() => openRunDirectory(mkdtempSync(join(tmpdir(), 'x-')), { mustExist: true, startHint: 'Start one here.' })).toThrow(/is not a run directory \(no state\.json\)\. Start one here\.$/);
  });

  it('keeps metrics append-only', () => {
    const run = openRunDirectory(mkdtempSync(join(tmpdir(), 'agentflow-run-')));
    run.appendMetrics([{ stage: 'train', step: 1, reward: 0.5 }]);
    run.appendMetrics([{ stage: 'train', step: 2, reward: 0.7 }]);
    expect(run.readMetrics().map((row) => row.reward)).toEqual([0.5, 0.7]);
  });

  it('tells its metrics listeners of each appended batch, after it is on disk, until removed', () => {
    const run = openRunDirectory(join(mkdtempSync(join(tmpdir(), 'agentflow-run-')), 'run'));
    const seen: Array<{ rows: number; onDisk: number }> = [];
    const remove = run.onMetrics((rows) => seen.push({ rows: rows.length, onDisk: run.readMetrics().length }));
    run.appendMetrics([{ stage: 'train', step: 1, reward: 0.5 }, { stage: 'eval', step: 1, accuracy: 0.25 }]);
    remove();
    run.appendMetrics([{ stage: 'train', step: 2, reward: 0.75 }]);
    expect(seen).toEqual([{ rows: 2, onDisk: 2 }]);
    expect(run.readMetrics()).toHaveLength(3);
  });

  it('with lock, has one writer: a second open is refused naming the holder until the first closes', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'agentflow-run-')), 'run');
    const first = openRunDirectory(dir, { lock: { purpose: 'agentflow run' } });
    expect(first.lock?.owner.pid).toBe(process.pid);
    expect(() => openRunDirectory(dir, { lock: { purpose: 'agentflow run --resume' } })).toThrow(
      expect.objectContaining({ code: 'RUN_LOCKED', message: expect.stringContaining("already locked by this process (agentflow run)") }),
    );
    // A reader takes no lock.
    expect(openRunDirectory(dir).lock).toBeUndefined();
    first.close();
    const second = openRunDirectory(dir, { lock: { purpose: 'agentflow run --resume' } });
    expect(second.lock?.owner.purpose).toBe('agentflow run --resume');
    second.close();
  });
});
