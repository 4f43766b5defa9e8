import { percent } from '../report/percent';
import { escapeXml, type PlotSeries, renderSvgPlot } from '../report/svg-plot';
import type { MeanEstimate } from '../statistics/t-interval';
import { type CreditComparison, type SweepArm, type SweepGoals, sweepGainPoints, sweepPrmReduction } from './sweep-analysis';

/** What a sweep's table and page show. */
export interface SweepReport {
  title: string;
  /** The command that ran it, for the page. */
  command: string;
  arms: SweepArm[];
  /** The process-credit arm against the outcome arm (one of `comparisons`, kept for readers of the first form). */
  comparison?: CreditComparison;
  /** Every arm other than outcome against outcome, in the arms' order; shown instead of `comparison` when given. */
  comparisons?: CreditComparison[];
  /** The goals the arms were counted against (`analyseSweepArm`). */
  goals: SweepGoals;
  /** Who wrote the page, in its footer (a CLI: its command, e.g. `agentflow sweep`). */
  generatedBy: string;
  /** A sentence after it in the footer, e.g. where each run's own report is. */
  runNote?: string;
}

const pct = (value: number | undefined | null) => (value === undefined || value === null || !Number.isFinite(value) ? '-' : percent(value));
const signed = (value: number, digits = 1) => `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
const estimate = (value: MeanEstimate, unit = '') =>
  Number.isFinite(value.mean) ? `${signed(value.mean)}${unit}${value.ci95 ? ` [${signed(value.ci95[0])}, ${signed(value.ci95[1])}]` : ''}` : '-';
const ratio = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : 'not reached');

/** One table row per run: the cells of both the Markdown table and the page. */
function runRows(report: SweepReport): string[][] {
  return report.arms.flatMap((arm) =>
    arm.runs.map((run) => {
      const summary = run.summary;
      if (!summary) return [arm.arm, String(run.seed), run.failure ?? 'unfinished', '', '', '', '', '', '', ''];
      const prm = summary.prm;
      const reduction = sweepPrmReduction(run);
      return [
        arm.arm,
        String(run.seed),
        `${pct(summary.before.accuracy)} [${pct(summary.before.ci95[0])}, ${pct(summary.before.ci95[1])}]`,
        `${pct(summary.after.accuracy)} [${pct(summary.after.ci95[0])}, ${pct(summary.after.ci95[1])}]`,
        signed(sweepGainPoints(run)),
        summary.paired ? summary.paired.pValue.toPrecision(2) : '-',
        prm ? `${prm.mse.toFixed(4)} vs ${prm.mse_constant.toFixed(4)} (${Number.isFinite(reduction) ? `${signed(-100 * reduction)}%` : '-'})` : '-',
        `${run.steps} / ${run.totalSteps}${run.stoppedEarly ? ' (stopped early)' : ''}`,
        run.warmStart ? `${run.warmStart.finalLoss?.toFixed(3) ?? '-'}${run.warmStart.heldOutAccuracy === null ? '' : ` (held-out ${pct(run.warmStart.heldOutAccuracy)})`}` : '-',
        summary.durationSeconds === undefined ? '-' : `${summary.durationSeconds.toFixed(0)} s`,
      ];
    }),
  );
}

const HEADER = ['credit', 'seed', 'before [95% CI]', 'after [95% CI]', 'gain (points)', 'p (McNemar)', 'PRM MSE vs constant', 'DAPO steps', 'warm-start loss', 'wall time'];

function armLines(arm: SweepArm, goals: SweepGoals): string {
  const reduction = arm.prmReduction;
  const prm =
    reduction.n > 0
      ? `; PRM MSE ${(100 * reduction.mean).toFixed(1)}%${reduction.ci95 ? ` [${(100 * reduction.ci95[0]).toFixed(1)}, ${(100 * reduction.ci95[1]).toFixed(1)}]` : ''} below the constant's, >= ${100 * goals.prmMseReduction}% on ${arm.prmReachedGoal} of ${reduction.n}`
      : '';
  const { mean: steps, ci95: stepsBand } = arm.stepsPerSolved;
  const stepsText = arm.stepsPerSolved.n > 0 ? `; ${steps.toFixed(2)}${stepsBand ? ` [${stepsBand[0].toFixed(2)}, ${stepsBand[1].toFixed(2)}]` : ''} steps per solved task after training` : '';
  return `${arm.arm}: ${arm.finished} of ${arm.runs.length} runs finished; mean gain ${estimate(arm.gain, ' points')} (95% t interval over seeds); >= ${goals.gainPoints} points on ${arm.reachedGoal} of ${arm.finished}${prm}${stepsText}.`;
}

function comparisonLine(comparison: CreditComparison, goals: SweepGoals): string {
  const reached = comparison.processStep === null ? 'never reaches it' : `reaches it at step ${comparison.processStep} of ${comparison.totalSteps}`;
  return (
    `${comparison.outcome} credit's mean final accuracy is ${pct(comparison.outcomeFinal)}; ${comparison.process} credit's mean curve ${reached} ` +
    `(fraction of the steps ${ratio(comparison.ratio)}, seed-bootstrap 95% interval [${ratio(comparison.ratio95[0])}, ${ratio(comparison.ratio95[1])}]; goal <= ${goals.stepsRatio}). ` +
    `Final accuracy, ${comparison.process} minus ${comparison.outcome}: ${estimate(comparison.finalDifference, ' points')}.`
  );
}

const comparisonsOf = (report: SweepReport): CreditComparison[] => report.comparisons ?? (report.comparison ? [report.comparison] : []);

/** The sweep as Markdown: the per-seed table, then one line per credit and one per comparison with outcome credit. */
export function renderSweepMarkdown(report: SweepReport): string {
  const lines = [`# ${report.title}`, '', `\`${report.command}\``, '', `| ${HEADER.join(' | ')} |`, `|${HEADER.map(() => '---').join('|')}|`];
  for (const row of runRows(report)) lines.push(`| ${row.join(' | ')} |`);
  lines.push('', ...report.arms.map((arm) => `- ${armLines(arm, report.goals)}`));
  for (const comparison of comparisonsOf(report)) lines.push(`- ${comparisonLine(comparison, report.goals)}`);
  return `${lines.join('\n')}\n`;
}

function curveSeries(arms: readonly SweepArm[], x: 'step' | 'rollouts'): PlotSeries[] {
  return arms.map((arm) => ({
    label: `${arm.arm} (mean of ${arm.finished}, 95% band)`,
    points: arm.curve.map((point) => [point[x], point.accuracy.mean] as [number, number]),
    band: arm.curve.flatMap((point) => (point.accuracy.ci95 ? [[point[x], ...point.accuracy.ci95] as [number, number, number]] : [])),
  }));
}

/** The sweep as a self-contained HTML page (inline CSS and SVG, no scripts). */
export function renderSweepHtml(report: SweepReport, generatedAt: Date = new Date()): string {
  const rows = runRows(report)
    .map((cells) => `<tr>${cells.map((cell) => `<td>${escapeXml(cell)}</td>`).join('')}</tr>`)
    .join('');
  const plots = [
    renderSvgPlot(curveSeries(report.arms, 'step'), { title: 'Held-out accuracy against DAPO steps', xLabel: 'DAPO step', yLabel: 'accuracy', yRange: [0, 1] }),
    renderSvgPlot(curveSeries(report.arms, 'rollouts'), { title: 'Held-out accuracy against rollouts spent', xLabel: 'rollouts generated', yLabel: 'accuracy', yRange: [0, 1] }),
  ];
  const notes = [...report.arms.map((arm) => armLines(arm, report.goals)), ...comparisonsOf(report).map((comparison) => comparisonLine(comparison, report.goals))];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(report.title)}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1180px;color:#222;padding:0 1rem}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:right}
th{background:#f5f5f5}td:first-child{text-align:left}code{background:#f5f5f5;padding:0 .2rem}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plots svg{border:1px solid #eee;background:#fff}footer{color:#777;font-size:.85rem;margin-top:2rem}
</style></head><body>
<h1>${escapeXml(report.title)}</h1>
<p><code>${escapeXml(report.command)}</code></p>
<ul>${notes.map((note) => `<li>${escapeXml(note)}</li>`).join('')}</ul>
<h2>Per seed</h2>
<table><thead><tr>${HEADER.map((cell) => `<th>${escapeXml(cell)}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>
<h2>Held-out accuracy curves (evaluation tasks, mean over seeds)</h2>
<div class="plots">${plots.join('\n')}</div>
<footer>Generated ${escapeXml(generatedAt.toISOString())} by ${escapeXml(report.generatedBy)}.${report.runNote ? ` ${escapeXml(report.runNote)}` : ''}</footer>
</body></html>
`;
}
