import { describe, expect, it } from 'vitest';
import { checkBenchmarkAnswer } from './benchmark-checker';
import { choiceIndexOf, letteredOptions, pickedChoiceIndex } from './choice-options';
import { gaiaQuasiExactMatch } from './gaia-answer';
import { tokenF1 } from './qa-f1';

describe('tokenF1 (SQuAD, HotpotQA)', () => {
  it('scores overlap of normalised tokens, the best over the accepted answers', () => {
    expect(tokenF1('The Denver Broncos!', ['Denver Broncos'])).toBe(1);
    // 1 common token: precision 1/1, recall 1/2.
    expect(tokenF1('Broncos', ['Denver Broncos'])).toBeCloseTo(2 / 3, 12);
    expect(tokenF1('Broncos', ['Carolina Panthers', 'Denver Broncos'])).toBeCloseTo(2 / 3, 12);
    // A repeated token counts as often as the reference has it.
    expect(tokenF1('paris paris', ['paris'])).toBeCloseTo(2 / 3, 12);
    expect(tokenF1('London', ['Paris'])).toBe(0);
  });

  it('gives yes/no answers no partial credit', () => {
    expect(tokenF1('yes', ['yes'])).toBe(1);
    expect(tokenF1('no it is not', ['no'])).toBe(0);
    expect(tokenF1('yes', ['yes sir'])).toBe(0);
  });
});

describe("gaiaQuasiExactMatch (GAIA's scorer)", () => {
  it('compares numbers as numbers, without $, % and thousands commas', () => {
    expect(gaiaQuasiExactMatch('34,689', '34689')).toBe(true);
    expect(gaiaQuasiExactMatch('$17', '17')).toBe(true);
    expect(gaiaQuasiExactMatch('0.17770', '0.1777')).toBe(true);
    expect(gaiaQuasiExactMatch('17 dollars', '17')).toBe(false);
    expect(gaiaQuasiExactMatch('18', '17')).toBe(false);
  });

  it('compares lists element by element, and text without spaces, punctuation and case', () => {
    expect(gaiaQuasiExactMatch('indonesia;myanmar', 'Indonesia, Myanmar')).toBe(true);
    expect(gaiaQuasiExactMatch('Myanmar, Indonesia', 'Indonesia, Myanmar')).toBe(false);
    expect(gaiaQuasiExactMatch('3.1.3.1; 1.11.1.7', '3.1.3.1; 1.11.1.7')).toBe(true);
    expect(gaiaQuasiExactMatch('Indonesia', 'Indonesia, Myanmar')).toBe(false);
    expect(gaiaQuasiExactMatch('the castle.', 'THE CASTLE')).toBe(true);
    expect(gaiaQuasiExactMatch('So we had to let it die', 'So we had to let it die.')).toBe(true);
    expect(gaiaQuasiExactMatch('castle', 'THE CASTLE')).toBe(false);
  });
});

describe('multiple-choice options', () => {
  const gpqa = ['A. 0.9', 'B. 0.7', 'C. 0.1', 'D. 0.3'];
  const medqa = ['A. Hemolytic uremic syndrome', 'B. Oral ulcers', 'C. Colorectal cancer', 'D. Pancreatic cancer'];

  it('splits letters off only when every option carries its own', () => {
    expect(letteredOptions(gpqa).map((option) => `${option.letter}|${option.text}`)).toEqual(['A|0.9', 'B|0.7', 'C|0.1', 'D|0.3']);
    expect(letteredOptions(['B cells', 'T cells']).map((option) => option.text)).toEqual(['B cells', 'T cells']);
  });

  it("finds the right option from GPQA's listed answer, MedQA's text or a letter", () => {
    expect(choiceIndexOf('A. 0.9', gpqa)).toBe(0);
    expect(choiceIndexOf('Colorectal cancer', medqa)).toBe(2);
    expect(choiceIndexOf('(D)', medqa)).toBe(3);
    expect(choiceIndexOf('E', medqa)).toBeUndefined();
    expect(choiceIndexOf('Crohn disease', medqa)).toBeUndefined();
    // Texts that differ only in a sign are not confused.
    expect(choiceIndexOf('-1', ['1', '-1'])).toBe(1);
  });

  it('reads the option an answer picks', () => {
    const texts = letteredOptions(medqa).map((option) => option.text);
    expect(['C', '(C)', 'C.', 'C. Colorectal cancer', 'The answer is C', 'colorectal cancer'].map((answer) => pickedChoiceIndex(answer, texts))).toEqual([2, 2, 2, 2, 2, 2]);
    expect(pickedChoiceIndex('E', texts)).toBeUndefined();
    expect(pickedChoiceIndex('cancer', texts)).toBeUndefined();
  });
});

describe('checkBenchmarkAnswer', () => {
  it('scores search QA by exact match with F1 beside it', () => {
    const item = { references: ['james madison'] };
    expect(checkBenchmarkAnswer('<answer>James Madison</answer>', item, 'exact_match_f1')).toMatchObject({ correct: true, f1: 1, method: 'exact_match' });
    const partial = checkBenchmarkAnswer('President Madison', item, 'exact_match_f1');
    expect(partial).toMatchObject({ correct: false, method: 'exact_match' });
    expect(partial.f1).toBeCloseTo(0.5, 12);
    expect(checkBenchmarkAnswer('', item, 'exact_match_f1')).toMatchObject({ correct: false, f1: 0, method: 'none' });
  });

  it("scores GAIA by its quasi-exact match, multiple choice by the option's letter", () => {
    expect(checkBenchmarkAnswer('34,689', { references: ['34689'] }, 'quasi_exact_match')).toMatchObject({ correct: true, method: 'quasi_exact_match', f1: null });
    const item = { references: ['Colorectal cancer'], choices: ['Hemolytic uremic syndrome', 'Oral ulcers', 'Colorectal cancer', 'Pancreatic cancer'], answerIndex: 2 };
    expect(checkBenchmarkAnswer('C', item, 'choice_letter')).toMatchObject({ correct: true, method: 'choice' });
    expect(checkBenchmarkAnswer('B. Oral ulcers', item, 'choice_letter')).toMatchObject({ correct: false, detail: 'picks B, the answer is C' });
    // Without answerIndex, the right option comes from the reference.
    expect(checkBenchmarkAnswer('colorectal cancer', { references: item.references, choices: item.choices }, 'choice_letter').correct).toBe(true);
  });
});
