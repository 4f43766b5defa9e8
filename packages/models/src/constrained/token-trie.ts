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

/**
 * Builds the trie of every token that has bytes (special tokens have none). One map from
 * (node, byte) to child, then two counting sorts (by byte, then by parent) lay the edges out:
 * a map per node made this the slowest part of setting up a 150k vocabulary.
 */
export function buildTokenTrie(tokenBytes: readonly (Uint8Array | undefined)[]): TokenTrie {
  const childOf = new Map<number, number>(); // node * 256 + byte -> child
  let parents = new Int32Array(1024);
  let bytesOf = new Uint8Array(1024);
  let size = 1;
  const tokensAt = new Map<number, number[]>();
  tokenBytes.forEach((bytes, tokenId) => {
    if (!bytes || bytes.length === 0) return;
    let node = 0;
    for (const byte of bytes) {
      const key = node * 256 + byte;
      let child = childOf.get(key);
      if (child === undefined) {
        if (size === parents.length) {
          parents = grow(parents, new Int32Array(size * 2));
          bytesOf = grow(bytesOf, new Uint8Array(size * 2));
        }
        child = size++;
        parents[child] = node;
        bytesOf[child] = byte;
        childOf.set(key, child);
      }
      node = child;
    }
    const list = tokensAt.get(node);
    if (list) list.push(tokenId);
    else tokensAt.set(node, [tokenId]);
  });
  // Children (every node but the root) stably sorted by byte, then by parent: each node's edges
  // end up contiguous and in byte order.
  const byByte = countingSort(size, 256, (child) => bytesOf[child]!, (index) => index + 1);
  const edgeStart = new Int32Array(size + 1);
  for (let child = 1; child < size; child++) edgeStart[parents[child]! + 1]!++;
  for (let node = 0; node < size; node++) edgeStart[node + 1]! += edgeStart[node]!;
  const fill = edgeStart.slice(0, size);
  const edgeByte = new Uint8Array(size - 1);
  const edgeChild = new Int32Array(size - 1);
  for (const child of byByte) {
    const edge = fill[parents[child]!]!++;
    edgeByte[edge] = bytesOf[child]!;
    edgeChild[edge] = child;
  }
  return { edgeStart, edgeByte, edgeChild, tokensAt, size };
}

function grow<T extends Int32Array | Uint8Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** The `size - 1` items `itemAt(0..)` stably sorted by `keyOf` (keys below `keys`). */
function countingSort(size: number, keys: number, keyOf: (item: number) => number, itemAt: (index: number) => number): Int32Array {
  const start = new Int32Array(keys + 1);
  for (let index = 0; index < size - 1; index++) start[keyOf(itemAt(index)) + 1]!++;
  for (let key = 0; key < keys; key++) start[key + 1]! += start[key]!;
  const sorted = new Int32Array(size - 1);
  for (let index = 0; index < size - 1; index++) {
    const item = itemAt(index);
    sorted[start[keyOf(item)]!++] = item;
  }
  return sorted;
}
