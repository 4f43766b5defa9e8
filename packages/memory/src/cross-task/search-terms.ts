/** At most this many distinct terms go into one query, so a pasted essay stays a cheap query. */
export const MAX_QUERY_TERMS = 64;

/**
 * Splits text into lower-case word terms (Unicode letters and digits). Both the FTS5 query
 * builder and the Qdrant BM25 encoder use it, so the two stores see the same words.
 */
export function tokenizeForSearch(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The distinct terms of a query, at most MAX_QUERY_TERMS, in order of first appearance. */
export function queryTerms(text: string): string[] {
  return [...new Set(tokenizeForSearch(text))].slice(0, MAX_QUERY_TERMS);
}

/**
 * Turns query terms into an FTS5 MATCH expression: each term is quoted as a string (so
 * `AND`, `NEAR`, `*`, `"` and `:` in user text are never FTS5 syntax) and the terms are joined
 * by OR, leaving the ranking to BM25. Returns undefined when there are no terms.
 */
export function toFtsMatchExpression(terms: readonly string[]): string | undefined {
  if (terms.length === 0) return undefined;
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
}
