import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyFinishedStages } from './copy-finished-stages';
import { openRunDirectory } from './run-directory';

describe('copyFinishedStages', () => {
  it('starts a run from the stages another finished, which a resume then skips, and refuses an unfinished source', () => {
    const root = mkdtempSync(join(tmpdir(), 'copy-stages-'));
    const source = openRunDirectory(join(root, 'a'));
    writeFileSync(join(source.root, 'weights.bin'), 'warm');
    source.appendMetrics([{ stage: 'warm-start', step: 1, loss: 0.5 }, { stage: 'train', step: 1, reward: 1 }]);
    source.markStageDone('warm-start', { finalLoss: 0.5 });
    source.markStageDone('train', { steps: 1 });
    source.close();
    const settings = { stages: ['warm-start'], paths: ['weights.bin', 'absent'], config: { credit: 'outcome' } };

    expect(copyFinishedStages(source.root, join(root, 'b'), settings)).toBe(true);
    const copy = openRunDirectory(join(root, 'b'), { mustExist: true });
    expect(copy.readState().stages).toEqual({ 'warm-start': source.readState().stages['warm-start'] });
    expect(copy.readMetrics()).toEqual([{ stage: 'warm-start', step: 1, loss: 0.5 }]);
    expect(readFileSync(join(copy.root, 'weights.bin'), 'utf8')).toBe('warm');
    expect(JSON.parse(readFileSync(join(copy.root, 'config.json'), 'utf8'))).toEqual({ credit: 'outcome' });
    copy.close();

    // A run already there is never overwritten; a stage the source has not finished copies nothing.
    expect(copyFinishedStages(source.root, join(root, 'b'), settings)).toBe(false);
    expect(copyFinishedStages(source.root, join(root, 'c'), { ...settings, stages: ['warm-start', 'label'] })).toBe(false);
    expect(existsSync(join(root, 'c'))).toBe(false);
  });
});
