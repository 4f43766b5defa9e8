import { describe, expect, it } from 'vitest';
import { renderSweepHtml, renderSweepMarkdown, type SweepReport } from './render-sweep';
import { analyseSweepArm } from './sweep-analysis';
import type { SweepRunRecord } from './sweep-run';

const GOALS = { gainPoints: 15, prmMseReduction: 0.3, stepsRatio: 0.7 };
const finished: SweepRunRecord = {
  arm: 'process',
  seed: 0,
  dir: 'sweep/process-seed0',
  summary: {
    before: { accuracy: 0.125, ci95: [0.02, 0.47] },
    after: { accuracy: 0.5, ci95: [0.22, 0.78], meanStepsSolved: 3.5 },
    paired: { pValue: 0.03125 },
    prm: { mse: 0.05, mse_constant: 0.1 },
    durationSeconds: 61.4,
  },
  steps: 1,
  totalSteps: 2,
  stoppedEarly: 'no groups with differing rewards',
  warmStart: { finalLoss: 0.4321, heldOutAccuracy: 0.5 },
  curve: [
    { step: 0, rollouts: 0, accuracy: 0.125 },
    { step: 2, rollouts: 8, accuracy: 0.5 },
  ],
};
const failed: SweepRunRecord = { arm: 'process', seed: 1, dir: 'sweep/process-seed1', failure: 'out of <memory>', steps: 0, totalSteps: 0, curve: [] };

const report = (runNote?: string): SweepReport => ({
  title: 'A <sweep>',
  command: 'sweep --seeds 0-1',
  arms: [analyseSweepArm('process', [finished, failed], GOALS)],
  goals: GOALS,
  generatedBy: 'my script',
  ...(runNote ? { runNote } : {}),
});

describe('the sweep rendered', () => {
  it('as Markdown: a row per run (a failure in place of the figures), a line per arm against its goals', () => {
    expect(renderSweepMarkdown(report())).toBe(
      [
        '# A <sweep>',
        '',
        '`sweep --seeds 0-1`',
        '',
        '| credit | seed | before [95% CI] | after [95% CI] | gain (points) | p (McNemar) | PRM MSE vs constant | DAPO steps | warm-start loss | wall time |',
        '|---|---|---|---|---|---|---|---|---|---|',
        '| process | 0 | 12.5% [2.0%, 47.0%] | 50.0% [22.0%, 78.0%] | +37.5 | 0.031 | 0.0500 vs 0.1000 (-50.0%) | 1 / 2 (stopped early) | 0.432 (held-out 50.0%) | 61 s |',
        '| process | 1 | out of <memory> |  |  |  |  |  |  |  |',
        '',
        "- process: 1 of 2 runs finished; mean gain +37.5 points (95% t interval over seeds); >= 15 points on 1 of 1; PRM MSE 50.0% below the constant's, >= 30% on 1 of 1; 3.50 steps per solved task after training.",
        '',
      ].join('\n'),
    );
  });

  it('as a page: escaped text, the two curve plots, the footer with who wrote it', () => {
    const page = renderSweepHtml(report("Each run's report is beside it."), new Date('2026-01-02T03:04:05.000Z'));
    expect(page).toContain('<title>A &lt;sweep&gt;</title>');
    expect(page).toContain('<td>out of &lt;memory&gt;</td>');
    expect(page.match(/<svg /g)).toHaveLength(2);
    expect(page).toContain('>process (mean of 1, 95% band)</text>');
    expect(page).not.toContain('<script');
    expect(page).toContain("<footer>Generated 2026-01-02T03:04:05.000Z by my script. Each run's report is beside it.</footer>");
    expect(renderSweepHtml(report(), new Date(0))).toContain('<footer>Generated 1970-01-01T00:00:00.000Z by my script.</footer>');
  });
});
