/**
 * GAIA's quasi-exact match (Mialon et al. 2023; the leaderboard's `scorer.py`), the rule GAIA
 * itself is scored by:
 * - a reference that reads as a number: the answer, without `$`, `%` and `,`, must read as the
 *   same number (`"$1,234"` is 1234);
 * - a reference holding `,` or `;`: a list, compared element by element (same length), each
 *   element by the number rule or as text with spaces removed and case folded;
 * - else text, with whitespace and ASCII punctuation removed and case folded.
 */
export function gaiaQuasiExactMatch(answer: string, reference: string): boolean {
  if (readsAsNumber(reference)) return numberOf(answer) === numberOf(reference);
  if (/[,;]/.test(reference)) {
    const expected = reference.split(/[,;]/);
    const given = answer.split(/[,;]/);
    if (expected.length !== given.length) return false;
    return expected.every((element, index) => {
      const candidate = given[index] as string;
      return readsAsNumber(element) ? numberOf(candidate) === numberOf(element) : squeeze(candidate, false) === squeeze(element, false);
    });
  }
  return squeeze(answer, true) === squeeze(reference, true);
}

/** As Python's `float(text)` accepts it: a decimal number, with surrounding spaces (not "inf" or "nan", which no GAIA answer is). */
function readsAsNumber(text: string): boolean {
  return /^\s*[+-]?(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?\s*$/i.test(text);
}

/** The answer as a number after dropping `$`, `%` and `,`; NaN (equal to nothing) when it is not one. */
function numberOf(text: string): number {
  const stripped = text.replace(/[$%,]/g, '');
  return readsAsNumber(stripped) ? Number(stripped.trim().replace(/_/g, '')) : Number.NaN;
}

const ASCII_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

function squeeze(text: string, withoutPunctuation: boolean): string {
  const folded = text.replace(/\s/g, '').toLowerCase();
  return withoutPunctuation ? folded.replace(ASCII_PUNCTUATION, '') : folded;
}
