/**
 * Normalises a short free-text answer the way QA benchmarks score exact match (SQuAD):
 * lower case, no punctuation, no articles (a, an, the), single spaces.
 */
export function normalizeShortAnswer(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\b(?:a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** True when the normalised prediction equals one normalised reference. */
export function exactMatch(prediction: string, references: readonly string[]): boolean {
  const normalized = normalizeShortAnswer(prediction);
  return references.some((reference) => normalizeShortAnswer(reference) === normalized);
}

const LETTERS = 'ABCDEFGHIJ';

/**
 * The option letter a response picks: `(C)`, `C)`, `C.`, `answer is C`, a lone letter, or
 * the text of one of `choices`. Undefined when none is recognisable.
 */
export function extractChoice(response: string, choices: readonly string[] = []): string | undefined {
  const count = Math.max(choices.length, 5);
  const letters = LETTERS.slice(0, count);
  const text = response.trim();
  const patterns = [
    new RegExp(`^\\(?([${letters}])\\)?[.:]?$`),
    new RegExp(`(?:answer|option|choice)\\s*(?:is|:)?\\s*\\(?([${letters}])\\b`, 'i'),
    new RegExp(`\\(([${letters}])\\)`),
    new RegExp(`^([${letters}])[.):]\\s`),
  ];
  for (const pattern of patterns) {
    const match = pattern.exec(text);
    if (match?.[1]) return match[1].toUpperCase();
  }
  const normalized = normalizeShortAnswer(text);
  const position = choices.findIndex((choice) => normalizeShortAnswer(choice) === normalized);
  return position >= 0 ? LETTERS[position] : undefined;
}

/** Checks a multiple-choice response against a reference given as a letter or as the option text. */
export function checkChoice(response: string, reference: string, choices: readonly string[] = []): boolean {
  const picked = extractChoice(response, choices);
  if (picked === undefined) return false;
  const referenceLetter = extractChoice(reference, choices);
  return referenceLetter !== undefined && picked === referenceLetter;
}
