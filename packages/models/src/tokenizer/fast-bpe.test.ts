import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandom } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { qwen3TokenizerDir } from '../testing/tiny-qwen3-folder';
import { createByteLevelTokenizerFiles, writeTokenizerFiles } from './byte-level-tokenizer';
import { bpeModelOf, createBpeMerger, installFastBpe } from './fast-bpe';
import { loadTokenizer } from './load-tokenizer';
import { trainByteLevelBpe } from './train-byte-level-bpe';

/** transformers.js's own tokenizer for a folder, its BPE merge loop untouched: the reference. */
async function referenceTokenizer(dir: string): Promise<{ encode(text: string): number[]; tokenizer: unknown }> {
  const { PreTrainedTokenizer } = await import('@huggingface/transformers');
  const read = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as object;
  const tokenizer = new PreTrainedTokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
  return { encode: (text) => tokenizer.encode(text, { add_special_tokens: false }) as number[], tokenizer };
}

/** The reference and the tokenizer loadTokenizer gives, after checking that the fast loop replaces the reference's own. */
async function bothTokenizers(dir: string) {
  const [fast, reference, replaced] = await Promise.all([loadTokenizer(dir), referenceTokenizer(dir), referenceTokenizer(dir)]);
  const model = bpeModelOf(replaced.tokenizer) as { bpe: unknown };
  const own = model.bpe;
  expect(installFastBpe(model)).toBe(true);
  expect(model.bpe).not.toBe(own);
  return { fast, reference, replaced };
}

/** Prompts in the shape of the task world's, with names, counts and tool calls drawn at random. */
function worldLikeTexts(count: number, seed: number): string[] {
  const random = createRandom(seed);
  const names = ['Riri', 'Obo', 'Kelu', 'Tamsa', 'Vida', 'Pern', 'Zuzu', 'Ekko'];
  const things = ['cats', 'dogs', 'books', 'coins', 'apples', 'boats'];
  const texts: string[] = [];
  for (let index = 0; index < count; index++) {
    const name = random.choice(names);
    const [a, b] = [random.choice(things), random.choice(things)];
    const lines = [`Q: What is ${name}'s ${a} times ${b}?`, 'Tools: corpus_search(query,k?) python(code) finish(answer)'];
    for (let step = 1; step <= random.int(0, 4); step++) {
      const thing = random.choice([a, b]);
      const stale = random.next() < 0.3 ? ' (outdated)' : '';
      lines.push(`${step}. corpus_search {"query":"${name} ${thing}${random.next() < 0.5 ? ' now' : ''}"} -> ${name} ${thing}: ${name} has ${random.int(1, 9)} ${thing}${stale}.`);
    }
    if (random.next() < 0.5) lines.push(`${lines.length - 1}. python {"code":"print(${random.int(1, 9)} * ${random.int(1, 9)})"} -> ${random.int(1, 81)}`);
    lines.push('JSON:');
    texts.push(`user\n${lines.join('\n')}`);
    texts.push(`{"tool":"finish","input":{"answer":"${random.int(1, 81)}"}}`);
  }
  return texts;
}

/** Short strings of random code points, symbols that share merges repeated, and edge cases. */
function oddTexts(count: number, seed: number): string[] {
  const random = createRandom(seed);
  const alphabet = [...'aaaabbbcc  \n\n""{}:,.0123456789éü😀中\t'];
  const texts = ['', 'a', 'aa', 'aaa', 'aaaa', 'aaaaaaa', '  ', '\n\n\n', '😀😀', 'é'.repeat(9)];
  for (let index = 0; index < count; index++) texts.push(Array.from({ length: random.int(1, 60) }, () => random.choice(alphabet)).join(''));
  return texts;
}

describe('the fast BPE merge loop', () => {
  it("gives transformers.js's tokens for the world planner's byte-level BPE (no pre-tokenizer split), on world prompts and odd strings", async () => {
    const texts = worldLikeTexts(300, 1);
    const merges = trainByteLevelBpe(texts.slice(0, 200), { merges: 300, wholeWords: /[A-Z][a-z]+|\d+/ });
    const dir = mkdtempSync(join(tmpdir(), 'fast-bpe-'));
    writeTokenizerFiles(dir, createByteLevelTokenizerFiles({ merges }));
    const { fast, reference, replaced } = await bothTokenizers(dir);
    const all = [...texts, ...worldLikeTexts(200, 2), ...oddTexts(500, 3)];
    const mismatches = all.filter((text) => {
      const expected = JSON.stringify(reference.encode(text));
      return JSON.stringify(replaced.encode(text)) !== expected || JSON.stringify(fast.encode(text)) !== expected;
    });
    expect(mismatches).toEqual([]);
    // The merges did run: the prompts are far fewer tokens than bytes.
    expect(fast.encode(texts[0]!).length).toBeLessThan(new TextEncoder().encode(texts[0]!).length / 3);
    // A second call is answered from the cache, the same tokens.
    expect(fast.encode(texts[0]!)).toEqual(reference.encode(texts[0]!));
  });

  it("gives transformers.js's tokens for the real Qwen3 tokenizer", async () => {
    const dir = qwen3TokenizerDir();
    const { fast, reference, replaced } = await bothTokenizers(dir);
    const all = [...worldLikeTexts(50, 4), ...oddTexts(300, 5), 'The quick brown fox jumps over the lazy dog. 1234567 + 89 = 1234656', 'def f(x):\n    return x ** 2  # 平方\n'];
    const mismatches = all.filter((text) => {
      const expected = JSON.stringify(reference.encode(text));
      return JSON.stringify(replaced.encode(text)) !== expected || JSON.stringify(fast.encode(text)) !== expected;
    });
    expect(mismatches).toEqual([]);
  });

  it('merges the lowest rank first and, between equal ranks, the leftmost; a pair listed twice keeps its last rank', () => {
    const merge = createBpeMerger([
      ['a', 'a'],
      ['b', 'c'],
      ['aa', 'a'],
    ]);
    // "aaa": (a,a) at 0 before (a,a) at 1, then nothing pairs "aa" with... "a": (aa,a) -> "aaa".
    expect(merge('aaa')).toEqual(['aaa']);
    expect(merge('aaaa')).toEqual(['aa', 'aa']);
    expect(merge('abca')).toEqual(['a', 'bc', 'a']);
    expect(merge('xyz')).toEqual(['x', 'y', 'z']);
    expect(merge('')).toEqual([]);
    // Ranked last by its second listing, (b,c) now loses to (c,d).
    const twice = createBpeMerger([
      ['b', 'c'],
      ['c', 'd'],
      ['b', 'c'],
    ]);
    expect(twice('bcd')).toEqual(['b', 'cd']);
  });

  it('leaves a model it does not know alone', () => {
    expect(installFastBpe(undefined)).toBe(false);
    expect(installFastBpe({ vocab: {} })).toBe(false);
    const suffixed = { merges: [['a', 'b']], bpe: () => [], end_of_word_suffix: '</w>' };
    expect(installFastBpe(suffixed)).toBe(false);
  });
});
