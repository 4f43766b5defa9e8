import type { LanguageModel } from '@agentflow/core';
import { type AgentFlowJudgeMode, createAgentFlowJudge } from '../answers/agentflow-judge';
import { type BenchmarkCheck, type BenchmarkCheckerName, checkBenchmarkAnswer } from '../answers/benchmark-checker';
import { AGENTFLOW_BENCHMARKS } from '../datasets/agentflow-benchmarks';
import type { BenchmarkItem } from '../datasets/benchmark-item';
import type { BenchmarkEvalSettings } from './benchmark-eval-settings';
import type { EvalJudgeRecord } from './eval-record';

/** Both scores of one run: the rule checker's, and the judge's when the eval has one. */
export interface EvalRunScore {
  check: BenchmarkCheck;
  judge: EvalJudgeRecord | null;
}

/** Scores the answers of an eval's runs. */
export interface EvalScorer {
  /** The rule checker (null: by item, `answerFormatFor`). */
  checker: BenchmarkCheckerName | null;
  /** Throws what the judge's model throws (an endpoint that is gone); an unreadable verdict is a record with `correct: null`. */
  score(answer: string | null, item: BenchmarkItem, signal?: AbortSignal): Promise<EvalRunScore>;
}

/** The rule checker of an eval's settings: its benchmark's, else null (by item). */
export function evalChecker(settings: BenchmarkEvalSettings): BenchmarkCheckerName | null {
  return settings.data.benchmark === null ? null : AGENTFLOW_BENCHMARKS[settings.data.benchmark].checker;
}

/** The reference as the paper's judge was shown it: the answer, or the list of accepted answers as Python prints one. */
function shownReference(item: BenchmarkItem): string {
  if (item.references.length === 1) return item.references[0] as string;
  return `[${item.references.map((reference) => `'${reference.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(', ')}]`;
}

/**
 * The scorer of an eval: every answer through the rule checker of its benchmark
 * (`checkBenchmarkAnswer`), and, with `judge` (the model `settings.judge` names), through the
 * paper's judge (`createAgentFlowJudge`): two stages for items with options, one otherwise. A run
 * without an answer is wrong for both, and the judge is not asked.
 */
export function createEvalScorer(settings: BenchmarkEvalSettings, judge?: LanguageModel): EvalScorer {
  const checker = evalChecker(settings);
  const paperJudge = judge ? createAgentFlowJudge({ model: judge }) : undefined;
  return {
    checker,
    async score(answer, item, signal) {
      const check = checkBenchmarkAnswer(answer ?? '', item, checker);
      if (!paperJudge) return { check, judge: null };
      const choices = item.choices && item.choices.length > 0 ? item.choices : undefined;
      const mode: AgentFlowJudgeMode = choices ? 'extract-then-verify' : 'direct';
      if (answer === null || answer.trim() === '') {
        return { check, judge: { mode, correct: false, analysis: 'The run gave no answer; the judge was not asked.', extractedOption: null } };
      }
      const verdict = await paperJudge.judge({ question: item.question, response: answer, correctAnswer: shownReference(item), ...(choices ? { choices } : {}) }, signal);
      if (verdict.status === 'failed') return { check, judge: { mode, correct: null, analysis: verdict.reason, extractedOption: null } };
      return { check, judge: { mode, correct: verdict.correct, analysis: verdict.analysis, extractedOption: verdict.extractedOption ?? null } };
    },
  };
}
