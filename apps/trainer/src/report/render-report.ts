import { escapeXml, percent, type PlotSeries, renderSvgPlot, type RunSummary, skillScore } from '@agentflow/eval';
import type { MetricsRow } from '@agentflow/core';

/** What the report needs of one run. */
export interface ReportRun {
  label: string;
  summary: RunSummary;
  metrics: MetricsRow[];
}

const TRAIN_PLOTS: Array<{ key: string; title: string; yLabel: string; yRange?: [number, number] }> = [
  { key: 'reward', title: 'Mean reward per training step', yLabel: 'reward' },
  { key: 'accuracy', title: 'Training accuracy per step', yLabel: 'accuracy', yRange: [0, 1] },
  { key: 'groupsKept', title: 'Groups kept by dynamic sampling', yLabel: 'groups' },
  { key: 'clipFraction', title: 'Clip fraction', yLabel: 'fraction of tokens' },
  { key: 'entropy', title: 'Policy entropy', yLabel: 'nats per token' },
];

function seriesOf(run: ReportRun, stage: string, key: string): PlotSeries {
  return {
    label: run.label,
    points: run.metrics
      .filter((row) => row.stage === stage && typeof row[key] === 'number')
      .map((row) => [row.step, row[key] as number]),
  };
}

const interval = (ci: [number, number]) => `[${percent(ci[0])}, ${percent(ci[1])}]`;

function accuracyTable(runs: ReportRun[]): string {
  const rows = runs.flatMap((run) => {
    const { before, after, warmStart } = run.summary;
    const lines: string[] = [];
    const row = (phase: string, e: RunSummary['before']) =>
      `<tr><td>${escapeXml(run.label)}</td><td>${phase}</td><td>${percent(e.accuracy)}</td><td>${interval(e.ci95)}</td><td>${e.correct} / ${e.total}</td><td>${e.meanSteps?.toFixed(2) ?? '-'}</td><td>${e.formatErrorRate === undefined ? '-' : percent(e.formatErrorRate)}</td></tr>`;
    if (warmStart) lines.push(row('random init', warmStart));
    lines.push(row('before DAPO', before), row('after DAPO', after));
    const delta = after.accuracy - before.accuracy;
    const paired = run.summary.paired ? `, ${run.summary.paired.test} p = ${run.summary.paired.pValue.toPrecision(3)}` : '';
    lines.push(`<tr class="delta"><td>${escapeXml(run.label)}</td><td>change</td><td colspan="5">${delta >= 0 ? '+' : ''}${(100 * delta).toFixed(1)} points${paired}</td></tr>`);
    return lines;
  });
  return `<table><thead><tr><th>run</th><th>phase</th><th>accuracy</th><th>95% CI (Wilson)</th><th>correct</th><th>steps/task</th><th>format errors</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function prmTable(runs: ReportRun[]): string {
  const rows = runs.map(({ label, summary: { prm } }) => {
    if (!prm) return `<tr><td>${escapeXml(label)}</td><td colspan="6">no PRM (outcome credit)</td></tr>`;
    const gain = skillScore(prm.mse, prm.mse_constant);
    return `<tr><td>${escapeXml(label)}</td><td>${prm.mse.toFixed(4)}</td><td>${prm.mse_constant.toFixed(4)}</td><td>${Number.isFinite(gain) ? percent(gain) : '-'}</td><td>${prm.pearson?.toFixed(3) ?? '-'}</td><td>${prm.spearman?.toFixed(3) ?? '-'}</td><td>${prm.n ?? '-'}</td></tr>`;
  });
  return `<table><thead><tr><th>run</th><th>PRM MSE</th><th>constant MSE</th><th>MSE reduction</th><th>Pearson</th><th>Spearman</th><th>held-out steps</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/**
 * Where the outcome broadcast misleads on the collected trajectories, by their step labels;
 * nothing for runs without labels (outcome or GiGPO credit).
 */
function stepOutcomeTable(runs: ReportRun[]): string {
  const share = (value: number | null, of: number) => (value === null ? '-' : `${percent(value)} of ${of}`);
  const rows = runs.flatMap(({ label, summary: { stepOutcome } }) =>
    stepOutcome
      ? [
          `<tr><td>${escapeXml(label)}</td><td>${escapeXml(stepOutcome.labeller)}</td><td>${share(stepOutcome.successfulWithBadStep, stepOutcome.successful)}</td><td>${share(stepOutcome.failedWithGoodStep, stepOutcome.failed)}</td></tr>`,
        ]
      : [],
  );
  if (rows.length === 0) return '';
  return `<h2>Where the outcome misleads (collected trajectories)</h2>
<table><thead><tr><th>run</th><th>step labels</th><th>successful with a bad step</th><th>failed with a good step</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/**
 * A self-contained HTML report (inline CSS and SVG, no scripts, no network) for one run,
 * or for several drawn on the same axes (`agentflow report --compare A B`).
 */
/**
 * The stages' own checks, at the top of the page: a failed one (DAPO stopped early, a PRM no
 * better than a constant) in a warning box, the others as one line each.
 */
function checksBlock(runs: ReportRun[]): string {
  const items = runs.flatMap((run) =>
    (run.summary.checks ?? []).map((check) => {
      const who = runs.length > 1 ? `${escapeXml(run.label)}: ` : '';
      return `<li class="${check.ok ? 'ok' : 'failed'}">${check.ok ? '' : '<strong>Check failed.</strong> '}${who}${escapeXml(check.message)}</li>`;
    }),
  );
  if (items.length === 0) return '';
  const failed = runs.some((run) => (run.summary.checks ?? []).some((check) => !check.ok));
  return `<ul class="checks${failed ? ' has-failed' : ''}">${items.join('')}</ul>`;
}

/** What each run trained and was judged on, and what the leakage guard found. */
function tasksList(runs: ReportRun[]): string {
  const rows = runs.flatMap(({ label, summary }) => {
    if (!summary.task) return [];
    const leakage = summary.leakage;
    const guard = leakage
      ? `leakage check (${leakage.method === 'identity' ? 'task identity' : `near-duplicate text at ${leakage.threshold}`}): ${leakage.checked.train} x ${leakage.checked.test} compared, ${leakage.pairs.length} pair(s)${leakage.dropped.length > 0 ? `, ${leakage.dropped.length} training item(s) dropped` : ''}`
      : 'no leakage record';
    return [`<li>${escapeXml(label)}: ${escapeXml(summary.task.description)} (${summary.task.train} train / ${summary.task.test} test); ${escapeXml(guard)}</li>`];
  });
  return rows.length > 0 ? `<h2>Tasks</h2>\n<ul>${rows.join('')}</ul>` : '';
}

export function renderReport(runs: ReportRun[], generatedAt: Date = new Date()): string {
  const title = runs.length === 1 ? `AgentFlow run: ${runs[0]?.label}` : `AgentFlow: ${runs.map((r) => r.label).join(' vs ')}`;
  const plots = TRAIN_PLOTS.map(({ key, title: plotTitle, yLabel, yRange }) =>
    renderSvgPlot(
      runs.map((run) => seriesOf(run, 'train', key)),
      { title: plotTitle, xLabel: 'DAPO step', yLabel, ...(yRange ? { yRange } : {}) },
    ),
  );
  // Only runs with a KL term (or another reference) report it.
  if (runs.some((run) => seriesOf(run, 'train', 'referenceKl').points.length > 0)) {
    plots.push(
      renderSvgPlot(
        runs.map((run) => seriesOf(run, 'train', 'referenceKl')),
        { title: 'KL to the reference policy (k3)', xLabel: 'DAPO step', yLabel: 'nats per token' },
      ),
    );
  }
  plots.push(
    renderSvgPlot(
      runs.map((run) => seriesOf(run, 'eval', 'accuracy')),
      { title: 'Held-out accuracy during training', xLabel: 'DAPO step', yLabel: 'accuracy', yRange: [0, 1] },
    ),
  );
  plots.push(
    renderSvgPlot(
      runs.map((run) => ({
        label: run.label,
        points: (run.summary.prm?.calibration ?? []).map((bin) => [bin.predicted, bin.observed] as [number, number]),
      })),
      { title: 'PRM calibration (held-out steps)', xLabel: 'predicted score', yLabel: 'mean label', xRange: [0, 1], yRange: [0, 1], scatter: true, diagonal: true },
    ),
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1120px;color:#222;padding:0 1rem}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ddd;padding:.35rem .6rem;text-align:right}
th{background:#f5f5f5}td:first-child,td:nth-child(2){text-align:left}tr.delta td{font-weight:600;background:#fafafa}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plots svg{border:1px solid #eee;background:#fff}
footer{color:#777;font-size:.85rem;margin-top:2rem}
ul.checks{list-style:none;padding:.6rem 1rem;border:1px solid #ddd;border-radius:4px}ul.checks.has-failed{border-color:#d62728;background:#fff5f5}
ul.checks li.failed{color:#a00}ul.checks li.ok{color:#555}
</style></head><body>
<h1>${escapeXml(title)}</h1>
${checksBlock(runs)}
${tasksList(runs)}
<h2>Held-out accuracy, before and after DAPO</h2>
${accuracyTable(runs)}
<h2>Process reward model</h2>
${prmTable(runs)}
${stepOutcomeTable(runs)}
<h2>Training curves</h2>
<div class="plots">${plots.join('\n')}</div>
<footer>Generated ${escapeXml(generatedAt.toISOString())} by agentflow. Credit: ${runs.map((r) => `${escapeXml(r.label)} = ${escapeXml(r.summary.credit)}`).join(', ')}.</footer>
</body></html>
`;
}
