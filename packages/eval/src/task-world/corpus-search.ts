import type { TaskWorldDocument } from './types';

export interface CorpusSearchHit {
  document: TaskWorldDocument;
  /** Position of the document in the corpus. */
  index: number;
  score: number;
}

export interface CorpusSearch {
  /** Documents ranked by BM25, best first; documents sharing no term are left out. */
  search(query: string, limit?: number): CorpusSearchHit[];
}

/**
 * Renders hits the way `corpus_search` of @agentflow/executor prints them, so that a
 * demonstration's observation is the text a correct run sees:
 * `[1] Title (id doc-3, score 2.345)` then the text, hits separated by a blank line.
 */
export function formatCorpusSearchOutput(query: string, hits: readonly CorpusSearchHit[]): string {
  if (hits.length === 0) return `No document matches ${JSON.stringify(query)}.`;
  return hits
    .map((hit, rank) => `[${rank + 1}] ${hit.document.title} (id ${hit.document.id}, score ${hit.score.toFixed(3)})\n${hit.document.text}`)
    .join('\n\n');
}

const tokenize = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * A reference BM25 (k1 = 1.2, b = 0.75, idf ln(1 + (N - n + 0.5) / (n + 0.5)); Robertson and
 * Zaragoza 2009) over title and text, ranking as the executor's `corpus_search` does (ties:
 * earlier document first). The world's demonstrations are computed with it; the agent uses
 * the real tool.
 */
export function createCorpusSearch(corpus: readonly TaskWorldDocument[], settings: { k1?: number; b?: number } = {}): CorpusSearch {
  const { k1 = 1.2, b = 0.75 } = settings;
  const documents = corpus.map((document, index) => {
    const terms = tokenize(`${document.title}\n${document.text}`);
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    return { document, index, counts, length: terms.length };
  });
  const averageLength = documents.reduce((sum, entry) => sum + entry.length, 0) / Math.max(1, documents.length);
  const documentFrequency = new Map<string, number>();
  for (const entry of documents) for (const term of entry.counts.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  return {
    search(query, limit = 3) {
      const terms = [...new Set(tokenize(query))];
      const hits: CorpusSearchHit[] = [];
      for (const entry of documents) {
        let score = 0;
        for (const term of terms) {
          const frequency = entry.counts.get(term);
          if (!frequency) continue;
          const containing = documentFrequency.get(term) ?? 0;
          const idf = Math.log(1 + (documents.length - containing + 0.5) / (containing + 0.5));
          score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * entry.length) / averageLength));
        }
        if (score > 0) hits.push({ document: entry.document, index: entry.index, score });
      }
      return hits.sort((x, y) => y.score - x.score || x.index - y.index).slice(0, limit);
    },
  };
}
