/** How the answer was found in a response. */
export type ExtractionMethod = 'answer_tag' | 'boxed' | 'answer_phrase' | 'final_line';

export interface ExtractedAnswer {
  text: string;
  method: ExtractionMethod;
}

/** The argument of the last `\boxed{...}` (or `\fbox{...}`), braces balanced. */
export function lastBoxed(text: string): string | undefined {
  const starts = [...text.matchAll(/\\(?:boxed|fbox)\s*\{/g)];
  for (let position = starts.length - 1; position >= 0; position--) {
    const match = starts[position] as RegExpMatchArray;
    let depth = 1;
    const open = (match.index ?? 0) + match[0].length;
    for (let index = open; index < text.length; index++) {
      const char = text[index];
      if (char === '{') depth++;
      else if (char === '}' && --depth === 0) return text.slice(open, index).trim();
    }
  }
  return undefined;
}

/**
 * Finds the final answer in a model response, in this order: the last
 * `<answer>...</answer>` (AgentFlow's format; a box inside it is unwrapped), the last
 * `\boxed{...}`, a "final answer is ..." phrase, the last non-empty line. Null for an
 * empty response. Only the first two count as well formatted (see `isFormatted`).
 */
export function extractAnswer(response: string): ExtractedAnswer | null {
  const tags = [...response.matchAll(/<answer>([\s\S]*?)<\/answer>/gi)];
  const lastTag = tags[tags.length - 1];
  if (lastTag) {
    const inner = (lastTag[1] ?? '').trim();
    return { text: lastBoxed(inner) ?? inner, method: 'answer_tag' };
  }
  const boxed = lastBoxed(response);
  if (boxed !== undefined) return { text: boxed, method: 'boxed' };
  const phrases = [...response.matchAll(/(?:final answer|the answer)\s*(?:is|:)\s*:?\s*([^\n]+)/gi)];
  const lastPhrase = phrases[phrases.length - 1];
  if (lastPhrase) return { text: trimSentence(lastPhrase[1] ?? ''), method: 'answer_phrase' };
  const lines = response
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const last = lines[lines.length - 1];
  return last === undefined ? null : { text: trimSentence(last.replace(/^(?:answer|final answer)\s*:\s*/i, '')), method: 'final_line' };
}

function trimSentence(text: string): string {
  return text.trim().replace(/[.。]+$/, '').replace(/^\*\*(.*)\*\*$/, '$1').trim();
}

/** True when the answer came from an explicit marker (`<answer>` or `\boxed`). */
export function isFormatted(extracted: ExtractedAnswer | null): boolean {
  return extracted !== null && (extracted.method === 'answer_tag' || extracted.method === 'boxed');
}
