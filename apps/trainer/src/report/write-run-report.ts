import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AgentFlowError, type MetricsRow, readConfigFile, readJsonl, validateConfig, writeFileAtomic } from '@agentflow/core';
import { renderReport, type ReportRun } from './render-report';
import { runSummarySchema } from '@agentflow/eval';

/** Loads what the report shows of one run directory. */
export function loadReportRun(dir: string): ReportRun {
  const summaryPath = join(dir, 'summary.json');
  if (!existsSync(summaryPath)) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `${summaryPath} is missing: the run has not reached its report stage (resume it with \`agentflow run --resume ${dir}\`).`,
      details: { dir },
    });
  }
  const summary = validateConfig(readConfigFile(summaryPath), runSummarySchema, summaryPath);
  const metrics = readJsonl<MetricsRow>(join(dir, 'metrics.jsonl'), { allowMissing: true });
  return { label: `${basename(dir)} (${summary.credit})`, summary, metrics };
}

/** Renders the runs in `dirs` (one, or several on the same axes) into `out`. */
export function writeRunReport(dirs: readonly string[], out: string): void {
  writeFileAtomic(out, renderReport(dirs.map(loadReportRun)));
}
