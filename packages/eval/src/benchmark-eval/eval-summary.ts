import type { Trajectory } from '@agentflow/core';
import type { BenchmarkCheckerName } from '../answers/benchmark-checker';
import { accuracy } from '../metrics/accuracy';
import { avgAtK, meanPassAtK } from '../metrics/pass-at-k';
import { type TrajectoryStats, trajectoryStats } from '../metrics/trajectory-stats';
import type { BenchmarkEvalSettings } from './benchmark-eval-settings';
import { type EvalRecord, evalRunKey } from './eval-record';
import { evalChecker } from './eval-scorer';

/** Both scores of an eval's benchmark over the recorded runs. */
export interface EvalScores {
  /** The rule checker's, always: the eval's `accuracy`. */
  deterministic: {
    /** The benchmark's rule checker, or `by_item` (`answerFormatFor`) for another file. */
    checker: BenchmarkCheckerName | 'by_item';
    accuracy: number;
    /** 95% Wilson score interval. */
    ci95: [number, number];
    correct: number;
    total: number;
    /** Search QA: the mean token F1 over the runs; null for other checkers. */
    f1: number | null;
  };
  /** The LLM judge's, when the eval has one (`settings.judge`); null otherwise. */
  judge: {
    /** The judge, as the settings name it. */
    model: string;
    /** correct / judged. */
    accuracy: number;
    /** 95% Wilson score interval over the judged runs. */
    ci95: [number, number];
    correct: number;
    /** Runs with a verdict (a run without an answer is judged wrong without asking). */
    judged: number;
    /** Runs whose verdict could not be read: in neither `correct` nor `judged`. */
    failed: number;
  } | null;
}

/** `eval.json`: what the eval measured so far, and what it ran on. */
export interface EvalSummary {
  /** The recorded settings: planner, data file and filters, seed, samples, limits. */
  settings: BenchmarkEvalSettings;
  /** Which of AgentFlow's ten benchmarks the file is (`settings.data.benchmark`), or null. */
  benchmark: string | null;
  /** The rule checker's score and, with a judge, the judge's. */
  scores: EvalScores;
  /** True when every (item, sample) has a record. */
  complete: boolean;
  /** Items the data file and filters select. */
  items: number;
  /** Items with all their samples recorded: the ones pass@k and avg@k average over. */
  itemsRecorded: number;
  /** Runs recorded (items x samples when complete). */
  total: number;
  correct: number;
  /** correct / total over every recorded run. */
  accuracy: number;
  /** 95% Wilson score interval of `accuracy` (Wilson 1927). */
  ci95: [number, number];
  /** With K = `samples` > 1: unbiased pass@K (Chen et al. 2021) and avg@K over items with K records; by the rule checker. */
  passAtK?: { k: number; value: number };
  avgAtK?: { k: number; value: number };
  meanSteps: number;
  meanToolCalls: number;
  /** Steps whose output did not parse as an action, over all steps. */
  formatErrorRate: number;
  toolErrorRate: number;
  /** Share of runs per termination reason. */
  terminations: TrajectoryStats['terminations'];
  updatedAt: string;
}

/**
 * The metrics of an eval from its records, in the data file's item order. A record for the
 * same run twice (two processes on one directory) counts once; trajectories come from
 * `trajectories.jsonl` for the recorded ids.
 */
export function summarizeEval(
  settings: BenchmarkEvalSettings,
  itemIds: readonly string[],
  records: readonly EvalRecord[],
  trajectories: readonly Trajectory[],
  now: () => Date = () => new Date(),
): EvalSummary {
  const byRun = new Map<string, EvalRecord>();
  for (const record of records) if (!byRun.has(evalRunKey(record.itemId, record.sample))) byRun.set(evalRunKey(record.itemId, record.sample), record);
  const kept = [...byRun.values()];
  const estimate = accuracy(kept.map((record) => record.correct));
  const recordedIds = new Set(kept.map((record) => record.trajectoryId));
  const stats = trajectoryStats(trajectories.filter((trajectory) => recordedIds.has(trajectory.id)));
  const k = settings.samples;
  // [item][sample]: whether that run was correct, for items with every sample recorded.
  const grid = itemIds
    .map((id) => Array.from({ length: k }, (_, sample) => byRun.get(evalRunKey(id, sample))?.correct))
    .filter((row): row is boolean[] => row.every((value) => value !== undefined));
  const summary: EvalSummary = {
    settings,
    benchmark: settings.data.benchmark,
    scores: scoresOf(settings, kept),
    complete: grid.length === itemIds.length,
    items: itemIds.length,
    itemsRecorded: grid.length,
    total: estimate.total,
    correct: estimate.successes,
    accuracy: estimate.estimate,
    ci95: [estimate.lower, estimate.upper],
    meanSteps: stats.meanSteps,
    meanToolCalls: stats.meanToolCalls,
    formatErrorRate: stats.formatErrorRate,
    toolErrorRate: stats.toolErrorRate,
    terminations: stats.terminations,
    updatedAt: now().toISOString(),
  };
  if (k > 1 && grid.length > 0) {
    summary.passAtK = { k, value: meanPassAtK(grid, k) };
    summary.avgAtK = { k, value: avgAtK(grid, k) };
  }
  return summary;
}

function scoresOf(settings: BenchmarkEvalSettings, records: readonly EvalRecord[]): EvalScores {
  const rules = accuracy(records.map((record) => record.correct));
  const f1s = records.flatMap((record) => (record.f1 === null ? [] : [record.f1]));
  const deterministic: EvalScores['deterministic'] = {
    checker: evalChecker(settings) ?? 'by_item',
    accuracy: rules.estimate,
    ci95: [rules.lower, rules.upper],
    correct: rules.successes,
    total: rules.total,
    f1: f1s.length === 0 ? null : f1s.reduce((sum, value) => sum + value, 0) / f1s.length,
  };
  if (settings.judge === null) return { deterministic, judge: null };
  const verdicts = records.flatMap((record) => (record.judge && record.judge.correct !== null ? [record.judge.correct] : []));
  const judged = accuracy(verdicts);
  return {
    deterministic,
    judge: {
      model: settings.judge,
      accuracy: judged.estimate,
      ci95: [judged.lower, judged.upper],
      correct: judged.successes,
      judged: judged.total,
      failed: records.filter((record) => record.judge?.correct === null).length,
    },
  };
}

/** The summary in one line for the terminal. */
export function formatEvalSummary(summary: EvalSummary): string {
  const [lower, upper] = summary.ci95.map((value) => value.toFixed(3));
  const parts = [`accuracy ${summary.accuracy.toFixed(3)} (${summary.correct}/${summary.total}, 95% CI ${lower}-${upper})`];
  const { f1 } = summary.scores.deterministic;
  if (f1 !== null) parts.push(`F1 ${f1.toFixed(3)}`);
  const { judge } = summary.scores;
  if (judge) parts.push(`judge ${judge.accuracy.toFixed(3)} (${judge.correct}/${judge.judged}${judge.failed > 0 ? `, ${judge.failed} unreadable` : ''})`);
  if (summary.passAtK) parts.push(`pass@${summary.passAtK.k} ${summary.passAtK.value.toFixed(3)}`);
  if (summary.avgAtK) parts.push(`avg@${summary.avgAtK.k} ${summary.avgAtK.value.toFixed(3)}`);
  parts.push(`steps ${summary.meanSteps.toFixed(2)}`, `tool calls ${summary.meanToolCalls.toFixed(2)}`, `format errors ${(summary.formatErrorRate * 100).toFixed(1)}%`);
  return `${summary.complete ? '' : `(partial: ${summary.itemsRecorded} of ${summary.items} items) `}${parts.join(', ')}`;
}
