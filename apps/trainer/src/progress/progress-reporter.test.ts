import { describe, expect, it } from 'vitest';
import { createProgressReporter, formatDuration, renderStageLine } from './progress-reporter';

function capture(mode: 'tty' | 'plain' | 'json' | 'quiet') {
  let t = 0;
  const out: string[] = [];
  const reporter = createProgressReporter({ mode, stages: ['collect', 'train'], write: (s) => out.push(s), now: () => t, intervalMs: 0 });
  return { reporter, out, advance: (ms: number) => (t += ms) };
}

describe('progress reporter', () => {
  it('shows a bar, an ETA and the key metric', () => {
    const line = renderStageLine(
      { name: 'train', status: 'running', completed: 5, total: 20, startedAt: 0, metrics: { reward: 0.4567 } },
      10_000,
    );
    expect(line).toBe(`◐ train       [${'█'.repeat(6)}${'░'.repeat(18)}] 5/20 eta 30s 10s  reward 0.457`);
    expect(formatDuration(125_000)).toBe('2m05s');
  });

  it('redraws the task list in place on a terminal', () => {
    const { reporter, out, advance } = capture('tty');
    reporter.handle({ type: 'stage-start', stage: 'collect', total: 4 });
    advance(1000);
    reporter.handle({ type: 'progress', stage: 'collect', completed: 2, total: 4 });
    expect(out.at(-1)?.startsWith('\x1b[2A')).toBe(true);
    expect(out.at(-1)).toContain('2/4 eta 1s');
    expect(out.at(-1)).toContain('○ train');
  });

  it('prints one JSON object per event in json mode', () => {
    const { reporter, out } = capture('json');
    reporter.handle({ type: 'progress', stage: 'train', completed: 1, total: 2, metrics: { reward: 1 } });
    expect(JSON.parse(out[0] ?? '')).toMatchObject({ type: 'progress', stage: 'train', completed: 1, metrics: { reward: 1 } });
  });

  it('prints only warnings and errors in quiet mode', () => {
    const { reporter, out } = capture('quiet');
    reporter.handle({ type: 'stage-start', stage: 'train' });
    reporter.handle({ type: 'log', level: 'info', message: 'hello' });
    reporter.handle({ type: 'log', level: 'warn', message: 'CUDA unavailable, using CPU' });
    expect(out).toEqual(['warn: CUDA unavailable, using CPU\n']);
  });

  it('keeps the count of a stage that ended early instead of showing it complete', () => {
    const { reporter, out } = capture('plain');
    reporter.handle({ type: 'stage-start', stage: 'train', total: 32 });
    reporter.handle({ type: 'progress', stage: 'train', completed: 24, total: 32 });
    reporter.handle({ type: 'stage-end', stage: 'train' });
    expect(out.at(-1)).toMatch(/✔ train .*24\/32/);
  });

  it('marks stages finished in an earlier run as resumed', () => {
    const { reporter, out } = capture('plain');
    reporter.handle({ type: 'stage-end', stage: 'collect' });
    expect(out[0]).toBe('↷ collect     done earlier (resumed)\n');
  });
});
