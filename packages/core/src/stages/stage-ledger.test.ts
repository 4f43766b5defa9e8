import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../schemas/run-event';
import { openStageLedger, runStages, type Stage } from './stage-ledger';

const ledgerPath = () => join(mkdtempSync(join(tmpdir(), 'agentflow-ledger-')), 'state.json');

describe('openStageLedger and runStages', () => {
  it('runs each stage once across a kill: finished stages are skipped, the interrupted one runs again', async () => {
    const path = ledgerPath();
    const calls: string[] = [];
    let killed = false;
    const stages: Array<Stage<{ tag: string }>> = [
      {
        name: 'collect',
        run: async ({ tag }) => {
          calls.push(`collect ${tag}`);
          return { trajectories: 3 };
        },
      },
      {
        name: 'train',
        run: async ({ tag }) => {
          calls.push(`train ${tag}`);
          if (!killed) {
            killed = true;
            throw new Error('killed');
          }
          return 'trained';
        },
      },
    ];
    const events: RunEvent[] = [];
    await expect(runStages(stages, openStageLedger(path), { tag: 'a' }, (event) => events.push(event))).rejects.toThrow('killed');
    const resumed = openStageLedger(path);
    await runStages(stages, resumed, { tag: 'b' }, (event) => events.push(event));
    expect(calls).toEqual(['collect a', 'train a', 'train b']);
    expect(resumed.result('collect')).toEqual({ trajectories: 3 });
    expect(resumed.result('train')).toBe('trained');
    expect(Object.keys(JSON.parse(readFileSync(path, 'utf8')).stages)).toEqual(['collect', 'train']);
    // A skipped stage still ends, so a progress display closes it.
    expect(events.map((event) => `${event.type} ${(event as { stage: string }).stage}`)).toEqual([
      'stage-start collect',
      'stage-end collect',
      'stage-start train',
      'stage-end collect',
      'stage-start train',
      'stage-end train',
    ]);
  });

  it('passes over the stages `only` leaves out', async () => {
    const ran: string[] = [];
    const stage = (name: string): Stage<object> => ({ name, run: async () => void ran.push(name) });
    await runStages([stage('a'), stage('b')], openStageLedger(ledgerPath()), {}, () => {}, new Set(['b']));
    expect(ran).toEqual(['b']);
  });

  it('names the file and the key when the ledger is damaged', () => {
    const path = ledgerPath();
    writeFileSync(path, '{"version": 1, "stages": ');
    expect(() => openStageLedger(path)).toThrow(new RegExp(`^${path}: not valid JSON: `));
    writeFileSync(path, JSON.stringify({ version: 1, createdAt: 'x', stages: { collect: { finishedAt: 3 } } }));
    expect(() => openStageLedger(path)).toThrow(`${path}: stages.collect.finishedAt: Invalid input: expected string, received number`);
  });
});
