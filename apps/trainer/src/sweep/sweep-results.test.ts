import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSweepRun } from './sweep-results';

describe('readSweepRun', () => {
  it('reports a run that has not started, and a damaged config.json as that run failing, naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sweep-run-'));
    expect(readSweepRun(join(dir, 'absent'), 'process-sum', 0)).toMatchObject({ failure: 'not started', steps: 0, curve: [] });
    writeFileSync(join(dir, 'config.json'), '{"seed": 0, "train": ');
    const damaged = readSweepRun(dir, 'process-sum', 0);
    expect(damaged.failure).toContain(join(dir, 'config.json'));
    expect(damaged.summary).toBeUndefined();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ seed: 0, train: { totalSteps: 'many' } }));
    expect(readSweepRun(dir, 'process-sum', 0).failure).toMatch(/totalSteps/);
  });
});
