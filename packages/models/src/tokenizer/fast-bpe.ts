/**
 * A faster, exact replacement for the merge loop of transformers.js's BPE model (`BPE.bpe`).
 *
 * transformers.js looks up every candidate pair as `JSON.stringify([left, right])` in a map of
 * strings and builds a new object per merge; on a tokenizer without a splitting pre-tokenizer
 * (the world planner's byte-level BPE, `use_regex: false`) each prompt is one word of hundreds of
 * symbols, and that loop was a seventh of the main thread's time in the label stage and DAPO.
 * This one works on integer symbol ids (a pair is one number) with a binary heap of
 * (rank, position) keys, and returns the same tokens: BPE merges the adjacent pair of lowest
 * rank, leftmost first, until none is left, which is the order transformers.js's scores
 * `rank + position / length` give. Results are cached per word as transformers.js does (LRU), for
 * words up to {@link CACHED_WORD_CHARACTERS} characters rather than 256: a group's rollouts and a
 * step's Monte-Carlo completions share their first prompt.
 */

/** Longest word (in UTF-16 code units) whose tokens are cached. */
export const CACHED_WORD_CHARACTERS = 4096;
/** Words cached at most (least recently used first out). */
const CACHE_CAPACITY = 10_000;

/** The parts of transformers.js's `BPE` model this replaces (internal to the library, so checked before use). */
interface TransformersBpeModel {
  merges: [string, string][];
  bpe(token: string): string[];
  end_of_word_suffix?: string | null;
  continuing_subword_suffix?: string | null;
}

/** Whether `model` is transformers.js's BPE model in the shape {@link installFastBpe} replaces. */
function replaceable(model: unknown): model is TransformersBpeModel {
  // transformers.js's models are callable objects: typeof says 'function'.
  if ((typeof model !== 'object' && typeof model !== 'function') || model === null) return false;
  const candidate = model as Partial<TransformersBpeModel>;
  return (
    typeof candidate.bpe === 'function' &&
    Array.isArray(candidate.merges) &&
    candidate.merges.every((merge) => Array.isArray(merge) && merge.length === 2 && typeof merge[0] === 'string' && typeof merge[1] === 'string') &&
    !candidate.end_of_word_suffix &&
    !candidate.continuing_subword_suffix
  );
}

/** The BPE model inside a transformers.js `PreTrainedTokenizer` (its `_tokenizer.model`), or undefined. */
export function bpeModelOf(tokenizer: unknown): unknown {
  return (tokenizer as { _tokenizer?: { model?: unknown } } | undefined)?._tokenizer?.model;
}

/**
 * Replaces `model.bpe` (transformers.js's `BPE` model of a loaded tokenizer, {@link bpeModelOf}) with
 * {@link createBpeMerger}'s merger over the model's merges. Returns false, changing nothing,
 * when the model is not a plain BPE (another model type, word suffixes).
 */
export function installFastBpe(model: unknown): boolean {
  if (!replaceable(model)) return false;
  const merge = createBpeMerger(model.merges);
  model.bpe = merge;
  return true;
}

/**
 * A BPE merge function over `merges` (in rank order; a pair listed twice keeps its last rank, as
 * transformers.js's map of ranks does): the tokens of one word, a string of symbols (code points).
 */
export function createBpeMerger(merges: readonly (readonly [string, string])[]): (word: string) => string[] {
  // Symbol ids: every merge's parts and result, so a pair is the number left * bound + right.
  const ids = new Map<string, number>();
  const idOf = (symbol: string): number => {
    let id = ids.get(symbol);
    if (id === undefined) {
      id = ids.size;
      ids.set(symbol, id);
    }
    return id;
  };
  const pairs = new Map<number, { rank: number; merged: number }>();
  const pending: [number, number, number, number][] = merges.map(([left, right], rank) => [idOf(left), idOf(right), idOf(left + right), rank]);
  const bound = ids.size + 1;
  for (const [left, right, merged, rank] of pending) pairs.set(left * bound + right, { rank, merged });
  const cache = new Map<string, string[]>();

  const mergeWord = (word: string): string[] => {
    const symbols = Array.from(word);
    const count = symbols.length;
    if (count < 2) return symbols;
    // A linked list over the start positions of the current tokens.
    const symbol = new Int32Array(count);
    const next = new Int32Array(count);
    const prev = new Int32Array(count);
    const end = new Int32Array(count); // one past the last symbol of the token starting here
    const version = new Int32Array(count);
    for (let index = 0; index < count; index++) {
      symbol[index] = ids.get(symbols[index]!) ?? -1;
      next[index] = index + 1 < count ? index + 1 : -1;
      prev[index] = index - 1;
      end[index] = index + 1;
    }
    // Heap entries: rank, left position, and the versions of both tokens when pushed.
    const heap = new MinHeap();
    const push = (left: number) => {
      const right = next[left]!;
      if (right < 0 || symbol[left]! < 0 || symbol[right]! < 0) return;
      const pair = pairs.get(symbol[left]! * bound + symbol[right]!);
      if (pair) heap.push(pair.rank, left, right, version[left]!, version[right]!);
    };
    for (let index = 0; index + 1 < count; index++) push(index);
    while (heap.size > 0) {
      const { rank, left, right, leftVersion, rightVersion } = heap.pop();
      if (version[left] !== leftVersion || version[right] !== rightVersion || next[left] !== right) continue;
      const pair = pairs.get(symbol[left]! * bound + symbol[right]!);
      if (!pair || pair.rank !== rank) continue;
      // Merge right into left.
      symbol[left] = pair.merged;
      end[left] = end[right]!;
      version[left]! += 1;
      version[right]! += 1; // gone: any entry naming it is stale
      next[left] = next[right]!;
      if (next[left]! >= 0) prev[next[left]!] = left;
      // The token before now pairs with the merged one (its entry with the old left is stale by
      // the version above; its own token is unchanged, so entries naming it as the right stay).
      if (prev[left]! >= 0) push(prev[left]!);
      push(left);
    }
    const tokens: string[] = [];
    for (let index = 0; index >= 0; index = next[index]!) tokens.push(symbols.slice(index, end[index]!).join(''));
    return tokens;
  };

  return (word: string): string[] => {
    if (word.length === 0) return [];
    const cached = cache.get(word);
    if (cached !== undefined) {
      // Most recently used last.
      cache.delete(word);
      cache.set(word, cached);
      return cached;
    }
    const tokens = mergeWord(word);
    if (word.length <= CACHED_WORD_CHARACTERS) {
      cache.set(word, tokens);
      if (cache.size > CACHE_CAPACITY) cache.delete(cache.keys().next().value as string);
    }
    return tokens;
  };
}

/** A binary min-heap of (rank, left) keys, with the entry's right position and versions. */
class MinHeap {
  private rank: number[] = [];
  private left: number[] = [];
  private right: number[] = [];
  private leftVersion: number[] = [];
  private rightVersion: number[] = [];
  size = 0;

  private less(a: number, b: number): boolean {
    return this.rank[a]! < this.rank[b]! || (this.rank[a] === this.rank[b] && this.left[a]! < this.left[b]!);
  }

  private swap(a: number, b: number): void {
    for (const column of [this.rank, this.left, this.right, this.leftVersion, this.rightVersion]) {
      const kept = column[a]!;
      column[a] = column[b]!;
      column[b] = kept;
    }
  }

  push(rank: number, left: number, right: number, leftVersion: number, rightVersion: number): void {
    let at = this.size++;
    this.rank[at] = rank;
    this.left[at] = left;
    this.right[at] = right;
    this.leftVersion[at] = leftVersion;
    this.rightVersion[at] = rightVersion;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.less(at, parent)) break;
      this.swap(at, parent);
      at = parent;
    }
  }

  pop(): { rank: number; left: number; right: number; leftVersion: number; rightVersion: number } {
    const top = { rank: this.rank[0]!, left: this.left[0]!, right: this.right[0]!, leftVersion: this.leftVersion[0]!, rightVersion: this.rightVersion[0]! };
    const last = --this.size;
    if (last > 0) {
      this.swap(0, last);
      let at = 0;
      for (;;) {
        const [a, b] = [2 * at + 1, 2 * at + 2];
        let smallest = at;
        if (a < last && this.less(a, smallest)) smallest = a;
        if (b < last && this.less(b, smallest)) smallest = b;
        if (smallest === at) break;
        this.swap(at, smallest);
        at = smallest;
      }
    }
    return top;
  }
}
