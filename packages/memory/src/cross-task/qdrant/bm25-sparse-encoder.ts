import { MAX_QUERY_TERMS, tokenizeForSearch } from '../search-terms';

/** A Qdrant sparse vector: parallel arrays of term ids and weights. */
export interface SparseVector {
  indices: number[];
  values: number[];
}

export interface Bm25Parameters {
  /** Term-frequency saturation (Robertson and Zaragoza 2009 suggest 1.2 to 2.0). */
  k1: number;
  /** Length normalisation strength, 0 to 1 (Robertson and Zaragoza 2009: 0.75). */
  b: number;
  /** Assumed mean document length in terms (Qdrant cannot supply the live mean). */
  averageDocumentLength: number;
}

/** 32-bit FNV-1a hash of a term: Qdrant sparse indices are unsigned 32-bit integers. */
export function hashTerm(term: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(term)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The document side of BM25 as a sparse vector: for each term, tf * (k1 + 1) /
 * (tf + k1 * (1 - b + b * length / averageDocumentLength)). A collection whose sparse vector
 * has `modifier: "idf"` multiplies each term by its inverse document frequency at query
 * time, so the dot product with a query of ones is the BM25 score.
 */
export function encodeBm25Document(text: string, parameters: Bm25Parameters): SparseVector {
  const terms = tokenizeForSearch(text);
  const frequencies = new Map<number, number>();
  for (const term of terms) {
    const index = hashTerm(term);
    frequencies.set(index, (frequencies.get(index) ?? 0) + 1);
  }
  const { k1, b, averageDocumentLength } = parameters;
  const lengthFactor = 1 - b + (b * terms.length) / averageDocumentLength;
  const indices = [...frequencies.keys()].sort((x, y) => x - y);
  return {
    indices,
    values: indices.map((index) => {
      const frequency = frequencies.get(index)!;
      return (frequency * (k1 + 1)) / (frequency + k1 * lengthFactor);
    }),
  };
}

/** The query side: each distinct term once, with weight 1 (IDF comes from the collection). */
export function encodeBm25Query(text: string): SparseVector {
  const indices = [...new Set(tokenizeForSearch(text).slice(0, 4 * MAX_QUERY_TERMS).map(hashTerm))]
    .slice(0, MAX_QUERY_TERMS)
    .sort((x, y) => x - y);
  return { indices, values: indices.map(() => 1) };
}
