import { writeFileAtomic } from '@agentflow/core';
import { percent } from '../report/percent';
import { escapeXml } from '../report/svg-plot';
import type { EvalDirectory } from './eval-directory';
import type { EvalRecord } from './eval-record';
import type { EvalSummary } from './eval-summary';

/** What the page shows of an item: its question and reference (absent when the data file is gone). */
export interface EvalPageItem {
  id: string;
  question: string;
  answer: string;
}

export interface EvalPageSettings {
  summary: EvalSummary;
  records: readonly EvalRecord[];
  /** The items in the data file's order; records of items not listed still get a row. */
  items: readonly EvalPageItem[];
  generatedAt?: Date;
}

const interval = (ci: readonly [number, number]) => `[${percent(ci[0])}, ${percent(ci[1])}]`;
const row = (label: string, value: string) => `<tr><th>${escapeXml(label)}</th><td>${value}</td></tr>`;

function summaryTable(summary: EvalSummary): string {
  const { deterministic, judge } = summary.scores;
  const rows = [
    row(`accuracy (${deterministic.checker} checker)`, `${percent(summary.accuracy)} <span class="ci">95% CI (Wilson) ${interval(summary.ci95)}</span>`),
    row('correct', `${summary.correct} / ${summary.total} runs${summary.complete ? '' : ` (incomplete: ${summary.itemsRecorded} of ${summary.items} items recorded)`}`),
    ...(summary.passAtK ? [row(`pass@${summary.passAtK.k}`, percent(summary.passAtK.value))] : []),
    ...(summary.avgAtK ? [row(`avg@${summary.avgAtK.k}`, percent(summary.avgAtK.value))] : []),
    ...(deterministic.f1 === null ? [] : [row('token F1', deterministic.f1.toFixed(3))]),
    ...(judge
      ? [row(`LLM judge (${escapeXml(judge.model)})`, `${percent(judge.accuracy)} <span class="ci">95% CI ${interval(judge.ci95)}</span>, ${judge.correct} / ${judge.judged} judged${judge.failed > 0 ? `, ${judge.failed} unreadable` : ''}`)]
      : []),
    row('steps per run', summary.meanSteps.toFixed(2)),
    row('tool calls per run', summary.meanToolCalls.toFixed(2)),
    row('format errors / tool errors', `${percent(summary.formatErrorRate)} / ${percent(summary.toolErrorRate)} of steps`),
    row(
      'ended by',
      Object.entries(summary.terminations)
        .map(([reason, share]) => `${escapeXml(reason)} ${percent(share as number)}`)
        .join(', '),
    ),
  ];
  return `<table class="summary"><tbody>${rows.join('')}</tbody></table>`;
}

function itemRows(records: readonly EvalRecord[], items: readonly EvalPageItem[]): string {
  const order = new Map(items.map((item, index) => [item.id, index]));
  const byId = new Map(items.map((item) => [item.id, item]));
  const sorted = [...records].sort((a, b) => (order.get(a.itemId) ?? Number.MAX_SAFE_INTEGER) - (order.get(b.itemId) ?? Number.MAX_SAFE_INTEGER) || a.sample - b.sample);
  return sorted
    .map((record) => {
      const item = byId.get(record.itemId);
      const answer = record.extracted ?? record.answer;
      return `<tr class="${record.correct ? 'right' : 'wrong'}" data-correct="${record.correct}"><td>${escapeXml(record.itemId)}${record.sample > 0 ? `#${record.sample}` : ''}</td><td class="text"><div class="clamp" title="${escapeXml(item?.question ?? '')}">${escapeXml(item?.question ?? '(not in the data file)')}</div></td><td class="text">${answer === null ? '<em>no answer</em>' : escapeXml(answer)}</td><td class="text">${escapeXml(item?.answer ?? '-')}</td><td class="mark">${record.correct ? '✔' : '✘'}</td><td>${record.steps}</td><td>${record.toolCalls}</td><td>${escapeXml(record.termination)}</td></tr>`;
    })
    .join('\n');
}

/** Filters the item table by text and by correctness; the page works without it (all rows shown). */
const FILTER_SCRIPT = `const q=document.getElementById('q'),w=document.getElementById('which'),n=document.getElementById('shown'),rows=[...document.querySelectorAll('#items tbody tr')];
function apply(){const t=q.value.toLowerCase();let s=0;for(const r of rows){const ok=(w.value==='all'||r.dataset.correct===w.value)&&(!t||r.textContent.toLowerCase().includes(t));r.hidden=!ok;if(ok)s++;}n.textContent=s+' of '+rows.length+' runs shown';}
q.addEventListener('input',apply);w.addEventListener('change',apply);apply();`;

/**
 * `eval.html` of a benchmark eval: one self-contained page (inline CSS and a small inline
 * filter script, no network) with the summary (accuracy with its Wilson interval, pass@k and
 * avg@k, the judge's score, steps and tool calls) and one row per run (question, answer,
 * reference, correct, steps, tool calls, how it ended) that a text box and a right/wrong
 * choice filter.
 */
export function renderEvalPage(settings: EvalPageSettings): string {
  const { summary } = settings;
  const title = `AgentFlow eval: ${summary.settings.planner} on ${summary.benchmark ?? summary.settings.data.path}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1240px;color:#222;padding:0 1rem}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ddd;padding:.3rem .55rem;vertical-align:top}
th{background:#f5f5f5;text-align:left}table.summary th{width:16rem}.ci{color:#666;margin-left:.5rem}
#items td{text-align:right}#items td.text{text-align:left;max-width:30rem;overflow-wrap:anywhere}#items td:first-child{text-align:left;white-space:nowrap}
#items tr.right td.mark{color:#1a7f37}#items tr.wrong td.mark{color:#c62828}#items td.mark{text-align:center;font-weight:700}
.clamp{display:-webkit-box;-webkit-line-clamp:3;-webkit-box-orient:vertical;overflow:hidden}
.filters{display:flex;gap:.8rem;align-items:center}.filters input{width:22rem;padding:.3rem}#shown{color:#666}
footer{color:#777;font-size:.85rem;margin-top:2rem}
</style></head><body>
<h1>${escapeXml(title)}</h1>
<p>${escapeXml(summary.settings.data.path)}: ${summary.items} item(s) x ${summary.settings.samples} sample(s), seed ${summary.settings.seed}.</p>
<h2>Summary</h2>
${summaryTable(summary)}
<h2>Runs</h2>
<div class="filters"><input id="q" type="search" placeholder="filter: question, answer, id..." aria-label="filter runs"><select id="which" aria-label="which runs"><option value="all">all runs</option><option value="true">correct</option><option value="false">wrong</option></select><span id="shown">${settings.records.length} runs</span></div>
<table id="items"><thead><tr><th>item</th><th>question</th><th>answer</th><th>reference</th><th>correct</th><th>steps</th><th>tool calls</th><th>ended by</th></tr></thead>
<tbody>
${itemRows(settings.records, settings.items)}
</tbody></table>
<footer>Generated ${escapeXml((settings.generatedAt ?? new Date()).toISOString())} by agentflow from eval.json and eval.jsonl.</footer>
<script>${FILTER_SCRIPT}</script>
</body></html>
`;
}

/** Writes `eval.html` into the eval directory (atomically); returns its path. */
export function writeEvalPage(directory: EvalDirectory, settings: EvalPageSettings): string {
  writeFileAtomic(directory.page, renderEvalPage(settings));
  return directory.page;
}
