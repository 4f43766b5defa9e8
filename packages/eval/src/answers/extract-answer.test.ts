import { describe, expect, it } from 'vitest';
import { extractAnswer, isFormatted, lastBoxed } from './extract-answer';

describe('extractAnswer', () => {
  it('takes the last <answer> tag, unwrapping a box inside it', () => {
    expect(extractAnswer('<answer>3</answer> wait, no: <answer>\\boxed{\\frac{1}{2}}</answer>')).toEqual({ text: '\\frac{1}{2}', method: 'answer_tag' });
  });

  it('takes the last \\boxed{} with nested braces when there is no tag', () => {
    expect(extractAnswer('so \\boxed{1} then \\boxed{\\frac{a^{2}}{b}} done')).toEqual({ text: '\\frac{a^{2}}{b}', method: 'boxed' });
    expect(lastBoxed('\\boxed{unclosed')).toBeUndefined();
  });

  it('falls back to an answer phrase, then to the last line', () => {
    expect(extractAnswer('Working...\nThe final answer is 42.\nThanks')).toEqual({ text: '42', method: 'answer_phrase' });
    expect(extractAnswer('steps\n\n  17  \n')).toEqual({ text: '17', method: 'final_line' });
    expect(extractAnswer('   ')).toBeNull();
  });

  it('counts only tags and boxes as well formatted', () => {
    expect(isFormatted(extractAnswer('<answer>1</answer>'))).toBe(true);
    expect(isFormatted(extractAnswer('\\boxed{1}'))).toBe(true);
    expect(isFormatted(extractAnswer('1'))).toBe(false);
    expect(isFormatted(null)).toBe(false);
  });
});
