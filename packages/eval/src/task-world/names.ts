import type { Random } from '@agentflow/core';

const CONSONANTS = 'bdfgklmnprstvz';
const VOWELS = 'aeiou';

/**
 * Unique, pronounceable, capitalised names of 4-5 letters (consonant-vowel patterns):
 * short so that a byte-level policy copies them cheaply, distinct so that BM25 on the
 * name finds exactly one document.
 */
export function generateNames(random: Random, count: number): string[] {
  const names = new Set<string>();
  const letter = (alphabet: string) => alphabet[random.int(0, alphabet.length - 1)] as string;
  let attempts = 0;
  while (names.size < count) {
    if (++attempts > count * 1000) throw new Error(`could not generate ${count} distinct names`);
    const core = letter(CONSONANTS) + letter(VOWELS) + letter(CONSONANTS) + letter(VOWELS);
    const name = random.next() < 0.5 ? core : core + letter(CONSONANTS);
    names.add(name[0]?.toUpperCase() + name.slice(1));
  }
  return [...names];
}
