/**
 * Okapi BM25 over an in-memory document list. Parameters k1 = 1.2 and b = 0.75 are the
 * usual defaults (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25
 * and Beyond", 2009); idf uses the non-negative form ln(1 + (N - n + 0.5) / (n + 0.5)).
 */
export interface Bm25Settings {
  /** Term-frequency saturation. Default 1.2. */
  k1?: number;
  /** Length normalisation. Default 0.75. */
  b?: number;
}

export interface Bm25Hit {
  index: number;
  score: number;
}

export interface Bm25Index {
  readonly size: number;
  /** The `k` best documents with a positive score, best first (ties: earlier document first). */
  search(query: string, k: number): Bm25Hit[];
}

/** Lower-cased runs of letters and digits (any script). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function createBm25Index(texts: readonly string[], settings: Bm25Settings = {}): Bm25Index {
  const k1 = settings.k1 ?? 1.2;
  const b = settings.b ?? 0.75;
  // term -> postings of [document index, term frequency]
  const postings = new Map<string, Array<[number, number]>>();
  const lengths = new Float64Array(texts.length);
  texts.forEach((text, index) => {
    const counts = new Map<string, number>();
    const tokens = tokenize(text);
    lengths[index] = tokens.length;
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    for (const [term, count] of counts) {
      let list = postings.get(term);
      if (!list) {
        list = [];
        postings.set(term, list);
      }
      list.push([index, count]);
    }
  });
  const total = lengths.reduce((sum, length) => sum + length, 0);
  const averageLength = texts.length === 0 ? 0 : total / texts.length;

  return {
    size: texts.length,
    search(query, k) {
      const scores = new Map<number, number>();
      for (const term of new Set(tokenize(query))) {
        const list = postings.get(term);
        if (!list) continue;
        const idf = Math.log(1 + (texts.length - list.length + 0.5) / (list.length + 0.5));
        for (const [index, frequency] of list) {
          const norm = averageLength === 0 ? 1 : 1 - b + (b * lengths[index]!) / averageLength;
          const gain = (idf * frequency * (k1 + 1)) / (frequency + k1 * norm);
          scores.set(index, (scores.get(index) ?? 0) + gain);
        }
      }
      return [...scores.entries()]
        .filter(([, score]) => score > 0)
        .sort((left, right) => right[1] - left[1] || left[0] - right[0])
        .slice(0, k)
        .map(([index, score]) => ({ index, score }));
    },
  };
}
