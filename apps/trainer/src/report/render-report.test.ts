import { describe, expect, it } from 'vitest';
import { renderReport, type ReportRun } from './render-report';
import type { RunSummary } from '@agentflow/eval';

const summary = (before: number, after: number): RunSummary => ({
  name: 'r',
  credit: 'process',
  before: { accuracy: before, ci95: [before - 0.1, before + 0.1], correct: Math.round(before * 40), total: 40, meanSteps: 3.2, formatErrorRate: 0.05 },
  after: { accuracy: after, ci95: [after - 0.1, after + 0.1], correct: Math.round(after * 40), total: 40 },
  paired: { test: 'mcnemar-exact', pValue: 0.0123, onlyBefore: 1, onlyAfter: 9 },
  prm: { mse: 0.05, mse_constant: 0.2, pearson: 0.8, spearman: 0.75, n: 120, calibration: [{ predicted: 0.2, observed: 0.25, count: 10 }] },
});

const run = (label: string, before: number, after: number): ReportRun => ({
  label,
  summary: summary(before, after),
  metrics: [
    { stage: 'train', step: 1, reward: 0.2, accuracy: 0.3, groupsKept: 4, clipFraction: 0.01, entropy: 1.2 },
    { stage: 'train', step: 2, reward: 0.5, accuracy: 0.6, groupsKept: 3, clipFraction: 0.02, entropy: 1.0 },
    { stage: 'eval', step: 2, accuracy: 0.55 },
  ],
});

describe('renderReport', () => {
  it('is a self-contained page with the before/after table, intervals and plots', () => {
    const html = renderReport([run('process', 0.35, 0.6)], new Date(0));
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    expect(html).toContain('<td>before DAPO</td><td>35.0%</td><td>[25.0%, 45.0%]</td><td>14 / 40</td>');
    expect(html).toContain('+25.0 points, mcnemar-exact p = 0.0123');
    expect(html).toContain('<td>75.0%</td>'); // PRM MSE reduction
    for (const title of ['Mean reward per training step', 'Groups kept by dynamic sampling', 'Clip fraction', 'Policy entropy', 'PRM calibration']) {
      expect(html).toContain(`aria-label="${title}`);
    }
    expect(html.match(/<path d="M/g)?.length).toBeGreaterThanOrEqual(5);
    // Calibration is drawn on the unit square, whatever the data's spread.
    const calibration = html.slice(html.indexOf('aria-label="PRM calibration'));
    expect(calibration).toContain('>0</text>');
    expect(calibration).not.toContain('>-0.5</text>');
  });

  it('draws two runs on the same axes for --compare', () => {
    const html = renderReport([run('process', 0.3, 0.6), run('outcome', 0.3, 0.4)]);
    expect(html).toContain('<title>AgentFlow: process vs outcome</title>');
    const rewardPlot = html.slice(html.indexOf('aria-label="Mean reward'), html.indexOf('</svg>', html.indexOf('aria-label="Mean reward')));
    expect(rewardPlot.match(/<path d="M/g)).toHaveLength(2);
    expect(rewardPlot).toContain('>outcome</text>');
  });

  it('draws the KL to the reference only for runs that report it', () => {
    expect(renderReport([run('no-kl', 0.3, 0.6)])).not.toContain('KL to the reference');
    const withKl = run('kl', 0.3, 0.6);
    withKl.metrics = withKl.metrics.map((row) => (row.stage === 'train' ? { ...row, referenceKl: 0.01 * row.step } : row));
    const html = renderReport([withKl]);
    const plot = html.slice(html.indexOf('aria-label="KL to the reference'), html.indexOf('</svg>', html.indexOf('aria-label="KL to the reference')));
    expect(plot.match(/<path d="M/g)).toHaveLength(1);
  });

  it('escapes labels and says when a plot has no data', () => {
    const html = renderReport([{ ...run('<b>x</b>', 0.1, 0.2), metrics: [] }]);
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(html).not.toContain('<b>x</b>');
    expect(html).toContain('no data recorded');
  });

  it('shows where the outcome misleads on the collected trajectories, for the runs with step labels only', () => {
    const labelled = run('process', 0.3, 0.6);
    labelled.summary = { ...labelled.summary, stepOutcome: { labeller: 'monte-carlo', successful: 4, failed: 5, successfulWithBadStep: 0.25, failedWithGoodStep: 0.6 } };
    const html = renderReport([labelled, run('outcome', 0.3, 0.4)]);
    expect(html).toContain('Where the outcome misleads (collected trajectories)');
    expect(html).toContain('<tr><td>process</td><td>monte-carlo</td><td>25.0% of 4</td><td>60.0% of 5</td></tr>');
    expect(html).not.toContain('<tr><td>outcome</td><td>monte-carlo</td>');
    expect(renderReport([run('outcome', 0.3, 0.4)])).not.toContain('Where the outcome misleads');
  });
});
