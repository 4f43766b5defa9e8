import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stepOutcomeOfFiles } from './step-outcome-files';

const jsonl = (rows: unknown[]) => rows.map((row) => `${JSON.stringify(row)}\n`).join('');
const label = (trajectoryId: string, stepIndex: number, value: number, outcomeReward?: number) => ({
  id: `${trajectoryId}:${stepIndex}`,
  trajectoryId,
  stepIndex,
  label: value,
  provenance: { labeller: 'monte-carlo', samples: 4, successes: value * 4 },
  ...(outcomeReward === undefined ? {} : { outcomeReward }),
});

describe('stepOutcomeOfFiles', () => {
  it('groups the labelled steps by trajectory, with its outcome, into the shares where the outcome misleads', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentflow-step-outcome-'));
    const paths = { labels: join(dir, 'labels.jsonl'), trajectories: join(dir, 'trajectories.jsonl') };
    writeFileSync(
      paths.trajectories,
      jsonl([
        { id: 'collect-a-0', outcomeReward: 1 },
        { id: 'collect-b-0', outcomeReward: 1 },
        { id: 'collect-c-0', outcomeReward: 0 },
        { id: 'collect-d-0', outcomeReward: 0 },
      ]),
    );
    writeFileSync(
      paths.labels,
      jsonl([
        // a: right, with a bad step (a stale value used, then checked); b: right, every step good.
        label('collect-a-0', 0, 1),
        label('collect-a-0', 1, 0.25),
        label('collect-a-0', 2, 1),
        label('collect-b-0', 0, 0.75),
        // c: wrong, its first lookup good; d: wrong throughout; e: only in the labels, wrong.
        label('collect-c-0', 0, 0.5),
        label('collect-c-0', 1, 0),
        label('collect-d-0', 0, 0),
        label('collect-e-0', 0, 0, 0),
      ]),
    );
    expect(stepOutcomeOfFiles(paths)).toEqual({ labeller: 'monte-carlo', successful: 2, failed: 3, successfulWithBadStep: 0.5, failedWithGoodStep: 1 / 3 });
  });

  it('is absent without labels: no labels file (outcome or gigpo credit), or an empty one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentflow-step-outcome-'));
    const paths = { labels: join(dir, 'labels.jsonl'), trajectories: join(dir, 'trajectories.jsonl') };
    expect(stepOutcomeOfFiles(paths)).toBeUndefined();
    writeFileSync(paths.labels, '');
    expect(stepOutcomeOfFiles(paths)).toBeUndefined();
  });
});
