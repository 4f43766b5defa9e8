/**
 * A byte trie over a vocabulary in compressed form: the edges of node n are
 * edgeByte/edgeChild[edgeStart[n] .. edgeStart[n + 1]), and tokensAt lists the tokens ending there.
 */
export interface TokenTrie {
  edgeStart: Int32Array;
  edgeByte: Uint8Array;
  edgeChild: Int32Array;
  tokensAt: Map<number, number[]>;
  size: number;
}

/** Builds the trie of every token that has bytes (special tokens have none). */
export function buildTokenTrie(tokenBytes: readonly (Uint8Array | undefined)[]): TokenTrie {
  const children: Map<number, number>[] = [new Map()];
  const tokensAt = new Map<number, number[]>();
  tokenBytes.forEach((bytes, tokenId) => {
    if (!bytes || bytes.length === 0) return;
    let node = 0;
    for (const byte of bytes) {
      const edges = children[node]!;
      let child = edges.get(byte);
      if (child === undefined) {
        child = children.length;
        children.push(new Map());
        edges.set(byte, child);
      }
      node = child;
    }
    const list = tokensAt.get(node);
    if (list) list.push(tokenId);
    else tokensAt.set(node, [tokenId]);
  });
  const size = children.length;
  const edgeStart = new Int32Array(size + 1);
  for (let node = 0; node < size; node++) edgeStart[node + 1] = edgeStart[node]! + children[node]!.size;
  const edgeByte = new Uint8Array(edgeStart[size]!);
  const edgeChild = new Int32Array(edgeStart[size]!);
  children.forEach((edges, node) => {
    let index = edgeStart[node]!;
    for (const [byte, child] of [...edges.entries()].sort((left, right) => left[0] - right[0])) {
      edgeByte[index] = byte;
      edgeChild[index] = child;
      index++;
    }
  });
  return { edgeStart, edgeByte, edgeChild, tokensAt, size };
}
