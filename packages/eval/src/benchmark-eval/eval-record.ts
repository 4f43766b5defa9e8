import { FINISH_ACTION, type Trajectory, terminationSchema } from '@agentflow/core';
import { z } from 'zod';
import type { AnswerCheck } from '../answers/check-answer';

/** The LLM judge's score of one run (`eval.jsonl`'s `judge`), as AgentFlow's paper scored. */
export const evalJudgeRecordSchema = z
  .object({
    mode: z.enum(['direct', 'extract-then-verify']).describe('One verification, or (multiple choice) the option extracted, then verified.'),
    correct: z.boolean().nullable().describe("The judge's verdict; null when its reply could not be read (why in analysis): counted as failed, not as wrong."),
    analysis: z.string().describe("The judge's analysis, or why there is no verdict."),
    extractedOption: z.string().nullable().describe('Two stages: the option extracted from the answer, as listed; else null.'),
  })
  .strict();

export type EvalJudgeRecord = z.infer<typeof evalJudgeRecordSchema>;

/**
 * One line of `eval.jsonl`: one run of the agent on one item, appended when the run
 * finishes (after its trajectory is in `trajectories.jsonl`). A resume skips every
 * (itemId, sample) that has a line.
 */
export const evalRecordSchema = z
  .object({
    itemId: z.string().min(1).describe("The item's id in the data file."),
    sample: z.number().int().nonnegative().describe('Which of the `samples` runs of the item (0-based).'),
    trajectoryId: z.string().min(1).describe('The id of its trajectory in trajectories.jsonl.'),
    seed: z.number().int().nonnegative().describe('The sampling seed of the run.'),
    answer: z.string().nullable().describe("The agent's final answer, or null when it gave none."),
    extracted: z.string().nullable().describe('The answer the checker read from it (the last \\boxed{}, <answer> tag, or line).'),
    correct: z.boolean().describe("Whether the answer matches a reference by the rule checker (the benchmark's, else by item): the eval's accuracy."),
    method: z.string().describe('What decided: numeric, string, game_of_24, choice, exact_match, quasi_exact_match, none.'),
    f1: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      // Records written before F1 was kept.
      .default(null)
      .describe('Search QA (exact_match_f1): the best token F1 over the accepted answers; null for other checkers.'),
    judge: evalJudgeRecordSchema
      .nullable()
      // Records written before the judge existed.
      .default(null)
      .describe("The LLM judge's score of the answer, beside the rule checker's; null when the eval has no judge."),
    steps: z.number().int().nonnegative().describe('Planner decisions made.'),
    toolCalls: z.number().int().nonnegative().describe('Steps that called a tool.'),
    formatErrors: z.number().int().nonnegative().describe('Steps whose output did not parse as an action.'),
    termination: terminationSchema,
    durationMs: z.number().nonnegative().describe('Wall-clock time of the run.'),
    finishedAt: z.string().describe('ISO-8601 time the record was written.'),
  })
  .strict();

export type EvalRecord = z.infer<typeof evalRecordSchema>;

/** The key a record and a pending run share. */
export const evalRunKey = (itemId: string, sample: number): string => `${itemId}#${sample}`;

/** The record of a finished run: its answer as the checker (and the judge, if any) read it, and what the run did. */
export function evalRecordOf(
  run: { itemId: string; sample: number; seed: number },
  trajectory: Trajectory,
  check: Pick<AnswerCheck, 'correct' | 'extracted' | 'method'> & { f1?: number | null },
  finishedAt: Date,
  judge: EvalJudgeRecord | null = null,
): EvalRecord {
  const actions = trajectory.steps.map((step) => step.action);
  return {
    itemId: run.itemId,
    sample: run.sample,
    trajectoryId: trajectory.id,
    seed: run.seed,
    answer: trajectory.answer,
    extracted: check.extracted,
    correct: check.correct,
    method: check.method,
    f1: check.f1 ?? null,
    judge,
    steps: trajectory.steps.length,
    toolCalls: actions.filter((action) => action !== null && action.action !== FINISH_ACTION).length,
    formatErrors: actions.filter((action) => action === null).length,
    termination: trajectory.termination,
    durationMs: trajectory.durationMs,
    finishedAt: finishedAt.toISOString(),
  };
}
