import { extractAnswer } from '../answers/extract-answer';
import { parseNumericAnswer } from '../answers/math-answer';
import { equals, rational } from '../answers/rational';

/**
 * True when a response states the expected integer: a bare number (`"19"`, the planner's
 * `finish` input), `<answer>19</answer>`, `\boxed{19}`, or a last line such as
 * `The answer is 19.` Anything else, including malformed text, is simply wrong.
 */
export function checkTaskWorldAnswer(response: unknown, expected: string): boolean {
  const text = typeof response === 'number' ? String(response) : typeof response === 'string' ? response : undefined;
  if (text === undefined) return false;
  const extracted = extractAnswer(text);
  if (!extracted) return false;
  const predicted = parseNumericAnswer(extracted.text);
  const reference = rational(BigInt(expected));
  return predicted !== undefined && reference !== undefined && equals(predicted, reference);
}
