import { AgentFlowError } from '@agentflow/core';
import { byteToUnicodeTable } from './byte-to-unicode';

export interface TrainByteLevelBpeSettings {
  /** Merges to learn at most; each adds one token to the vocabulary. */
  merges: number;
  /** Stop early when the most frequent pair occurs fewer times than this (default 2). */
  minFrequency?: number;
  /**
   * Words that must become single tokens wherever they occur (e.g. `/[A-Z][a-z]+|\d+/g` for
   * names and numbers): their merges are chained left to right and ranked before all others,
   * so a name in the question, in a tool output and in the model's own action is the same
   * token, which is what lets a small model learn to copy it. BPE then learns `merges` more
   * over the text between the words.
   */
  wholeWords?: RegExp;
  /** Extra words to make whole even if the texts lack them (e.g. every number up to 300). */
  extraWords?: readonly string[];
}

/** Applies ranked merges to symbols as BPE does: the lowest-ranked adjacent pair first. */
function applyMerges(symbols: string[], ranks: ReadonlyMap<string, number>): string[] {
  let current = symbols;
  for (;;) {
    let best = -1;
    let bestRank = Number.POSITIVE_INFINITY;
    for (let i = 0; i + 1 < current.length; i++) {
      const rank = ranks.get(`${current[i]} ${current[i + 1]}`);
      if (rank !== undefined && rank < bestRank) {
        best = i;
        bestRank = rank;
      }
    }
    if (best < 0) return current;
    const left = current[best] as string;
    const right = current[best + 1] as string;
    const merged: string[] = [];
    for (let i = 0; i < current.length; i++) {
      if (i + 1 < current.length && current[i] === left && current[i + 1] === right) {
        merged.push(left + right);
        i++;
      } else {
        merged.push(current[i] as string);
      }
    }
    current = merged;
  }
}

/**
 * Merges that make each word one token. Shorter words go first; each word is encoded with the
 * merges so far and whatever pieces remain are joined left to right by new merges. A word
 * whose chain would be cut by another word's merge ("68" inside "868") still ends whole.
 */
function wordMerges(words: Iterable<string>, table: readonly string[]): string[] {
  const encoder = new TextEncoder();
  const merges: string[] = [];
  const ranks = new Map<string, number>();
  const ordered = [...words].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  for (const word of ordered) {
    let symbols = applyMerges(
      Array.from(encoder.encode(word), (byte) => table[byte] as string),
      ranks,
    );
    while (symbols.length > 1) {
      const merge = `${symbols[0]} ${symbols[1]}`;
      ranks.set(merge, merges.length);
      merges.push(merge);
      symbols = [`${symbols[0]}${symbols[1]}`, ...symbols.slice(2)];
    }
  }
  return merges;
}

/**
 * Learns byte-level BPE merges (Sennrich et al. 2016, over GPT-2's byte alphabet) from
 * sample texts: repeatedly merge the most frequent adjacent pair of symbols, ties broken by
 * the pair's text so the result is deterministic. Returns merges in rank order as
 * `"left right"` strings, the form `tokenizer.json` stores. Texts are not split into words
 * first (the tokenizer uses no pre-tokenizer regex), so a merge may span a space or a quote:
 * `{"query":"` can become one token, which is what a tiny model wants of its JSON.
 */
export function trainByteLevelBpe(texts: readonly string[], settings: TrainByteLevelBpeSettings): string[] {
  if (!Number.isInteger(settings.merges) || settings.merges < 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `trainByteLevelBpe: merges must be a non-negative integer, got ${settings.merges}.`,
    });
  }
  const table = byteToUnicodeTable();
  if (settings.wholeWords) {
    const pattern = new RegExp(settings.wholeWords.source, settings.wholeWords.flags.includes('g') ? settings.wholeWords.flags : `${settings.wholeWords.flags}g`);
    const words = new Set<string>(settings.extraWords ?? []);
    const pieces: string[] = [];
    for (const text of texts) {
      let last = 0;
      for (const match of text.matchAll(pattern)) {
        if (match[0] === '') continue;
        words.add(match[0]);
        if ((match.index ?? 0) > last) pieces.push(text.slice(last, match.index));
        last = (match.index ?? 0) + match[0].length;
      }
      if (last < text.length) pieces.push(text.slice(last));
    }
    const first = wordMerges(words, table);
    const known = new Set(first);
    const rest = trainByteLevelBpe(pieces, { merges: settings.merges, ...(settings.minFrequency === undefined ? {} : { minFrequency: settings.minFrequency }) });
    return [...first, ...rest.filter((merge) => !known.has(merge))];
  }
  const minFrequency = settings.minFrequency ?? 2;
  const encoder = new TextEncoder();
  // Identical texts (the same prompt line in many tasks) are counted once with a weight.
  const weights = new Map<string, number>();
  for (const text of texts) weights.set(text, (weights.get(text) ?? 0) + 1);
  const sequences: Array<{ symbols: string[]; weight: number }> = [...weights].map(([text, weight]) => ({
    symbols: Array.from(encoder.encode(text), (byte) => table[byte] as string),
    weight,
  }));
  const merges: string[] = [];
  while (merges.length < settings.merges) {
    const counts = new Map<string, number>();
    for (const { symbols, weight } of sequences) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = `${symbols[i]} ${symbols[i + 1]}`;
        counts.set(key, (counts.get(key) ?? 0) + weight);
      }
    }
    let best: string | undefined;
    let bestCount = 0;
    for (const [key, count] of counts) {
      if (count > bestCount || (count === bestCount && best !== undefined && key < best)) {
        best = key;
        bestCount = count;
      }
    }
    if (best === undefined || bestCount < minFrequency) break;
    merges.push(best);
    const [left, right] = best.split(' ') as [string, string];
    const merged = left + right;
    for (const sequence of sequences) {
      const out: string[] = [];
      const { symbols } = sequence;
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
          out.push(merged);
          i++;
        } else {
          out.push(symbols[i] as string);
        }
      }
      sequence.symbols = out;
    }
  }
  return merges;
}
