import { normalizeShortAnswer } from './short-answer';

/** Answers that HotpotQA's official scorer never gives partial credit for (Yang et al. 2018, hotpot_evaluate_v1.py). */
const CLOSED_ANSWERS = new Set(['yes', 'no', 'noanswer']);

function tokenF1Against(prediction: string, reference: string): number {
  const predicted = normalizeShortAnswer(prediction);
  const expected = normalizeShortAnswer(reference);
  if ((CLOSED_ANSWERS.has(predicted) || CLOSED_ANSWERS.has(expected)) && predicted !== expected) return 0;
  const predictedTokens = predicted === '' ? [] : predicted.split(' ');
  const expectedTokens = expected === '' ? [] : expected.split(' ');
  if (predictedTokens.length === 0 || expectedTokens.length === 0) return predictedTokens.length === expectedTokens.length ? 1 : 0;
  // Common tokens as a multiset: "the the cat" shares two tokens with "the cat" at most once each.
  const counts = new Map<string, number>();
  for (const token of expectedTokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of predictedTokens) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      common++;
      counts.set(token, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / predictedTokens.length;
  const recall = common / expectedTokens.length;
  return (2 * precision * recall) / (precision + recall);
}

/**
 * Token F1 of a short answer, the best over the accepted `references`, as the QA benchmarks
 * score it (SQuAD, Rajpurkar et al. 2016; HotpotQA, 2WikiMultihopQA and MuSiQue reuse it):
 * both sides normalised by `normalizeShortAnswer` (case, punctuation, articles), tokens counted
 * as a multiset, F1 of precision and recall. As HotpotQA's scorer, a yes/no answer gets 0 unless
 * it is exactly right. 0 without references.
 */
export function tokenF1(prediction: string, references: readonly string[]): number {
  let best = 0;
  for (const reference of references) best = Math.max(best, tokenF1Against(prediction, reference));
  return best;
}
