import { AgentFlowError } from '@agentflow/core';

/** Turns texts into fixed-size vectors for vector and hybrid memory search. */
export interface Embedder {
  /** Size of every vector `embed` returns. */
  readonly dimensions: number;
  /** One vector per text, in the order of `texts`. */
  embed(texts: string[]): Promise<number[][]>;
}

/**
 * Checks what an embedding back end returned: one finite vector of `dimensions` numbers per
 * text. Back ends are outside code, so a wrong answer becomes a clear error, not a bad index.
 */
export function checkEmbeddings(vectors: unknown, count: number, dimensions: number, source: string): number[][] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `${source} returned ${Array.isArray(vectors) ? vectors.length : typeof vectors} embeddings for ${count} texts.`,
    });
  }
  vectors.forEach((vector, index) => {
    if (!Array.isArray(vector) || vector.length !== dimensions) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `${source} returned an embedding of ${Array.isArray(vector) ? vector.length : typeof vector} dimensions for text ${index}; expected ${dimensions}.`,
        details: { index, expected: dimensions },
      });
    }
    if (!vector.every((value) => typeof value === 'number' && Number.isFinite(value))) {
      throw new AgentFlowError({
        code: 'PARSE_ERROR',
        message: `${source} returned a non-finite value in the embedding of text ${index}.`,
        details: { index },
      });
    }
  });
  return vectors as number[][];
}

/** Runs `embed` over `texts` in slices of at most `batchSize`, keeping order. */
export async function embedInBatches(
  texts: string[],
  batchSize: number,
  embed: (batch: string[]) => Promise<number[][]>,
): Promise<number[][]> {
  const vectors: number[][] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    vectors.push(...(await embed(texts.slice(start, start + batchSize))));
  }
  return vectors;
}

/** Scales a vector to unit length (a zero vector stays zero). */
export function normalizeVector(vector: number[]): number[] {
  const norm = Math.hypot(...vector);
  return norm === 0 ? vector : vector.map((value) => value / norm);
}
