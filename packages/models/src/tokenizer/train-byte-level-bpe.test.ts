import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { byteLevelVocabSize, createByteLevelTokenizerFiles, writeTokenizerFiles } from './byte-level-tokenizer';
import { loadTokenizer } from './load-tokenizer';
import { trainByteLevelBpe } from './train-byte-level-bpe';

const samples = [
  '{"thought":"find Lanip","action":"corpus_search","action_input":{"query":"Lanip"}}',
  '{"thought":"find Riri","action":"corpus_search","action_input":{"query":"Riri"}}',
  '{"thought":"compute","action":"python","action_input":{"code":"4+15"}}',
  'Q: How many cats does Lanip have? é',
];

describe('trainByteLevelBpe', () => {
  it('learns frequent pairs first, deterministically', () => {
    const merges = trainByteLevelBpe(samples, { merges: 50 });
    expect(merges.length).toBeGreaterThan(10);
    expect(merges[0]?.split(' ')).toHaveLength(2);
    expect(trainByteLevelBpe(samples, { merges: 50 })).toEqual(merges);
    expect(trainByteLevelBpe(samples, { merges: 5 })).toEqual(merges.slice(0, 5));
  });

  it('gives a tokenizer that AutoTokenizer loads, with shorter encodings that round-trip', async () => {
    const merges = trainByteLevelBpe(samples, { merges: 120 });
    const dir = mkdtempSync(join(tmpdir(), 'bpe-'));
    writeTokenizerFiles(dir, createByteLevelTokenizerFiles({ merges }));
    const tokenizer = await loadTokenizer(dir);
    const plainDir = mkdtempSync(join(tmpdir(), 'bytes-'));
    writeTokenizerFiles(plainDir);
    const plain = await loadTokenizer(plainDir);
    const text = samples[0] as string;
    const ids = tokenizer.encode(text);
    expect(ids.length).toBeLessThan(plain.encode(text).length / 3);
    expect(tokenizer.decode(ids)).toBe(text);
    // Text never seen in training still round-trips, byte by byte where no merge applies.
    expect(tokenizer.decode(tokenizer.encode('Zürich 42 ✓ new'))).toBe('Zürich 42 ✓ new');
    expect(Math.max(...ids)).toBeLessThan(byteLevelVocabSize(merges));
    expect(tokenizer.size).toBe(byteLevelVocabSize(merges));
  });

  it('makes whole words single tokens wherever they occur', async () => {
    const texts = ['Q: What is Lanip\'s cats times dogs?', '{"query":"Lanip"}', 'Lanip has 4 cats, 15 dogs and 3 hens.'];
    const merges = trainByteLevelBpe(texts, { merges: 40, wholeWords: /[A-Z][a-z]+|\d+/, extraWords: ['81'] });
    const dir = mkdtempSync(join(tmpdir(), 'bpe-words-'));
    writeTokenizerFiles(dir, createByteLevelTokenizerFiles({ merges }));
    const tokenizer = await loadTokenizer(dir);
    const lanip = tokenizer.encode('Lanip');
    expect(lanip).toHaveLength(1);
    for (const text of [...texts, '{"code":"4*81"}']) expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    // The same id in the question, in a query and in a tool output.
    for (const text of texts) expect(tokenizer.encode(text)).toContain(lanip[0]);
    expect(tokenizer.encode('81')).toHaveLength(1);
    // One word inside another ("68" in "868", "Ri" in "Riri") does not keep the longer one from forming.
    const nested = trainByteLevelBpe(['score 3.868 and 68', 'Ri met Riri'], { merges: 10, wholeWords: /[A-Z][a-z]+|\d+/ });
    const nestedDir = mkdtempSync(join(tmpdir(), 'bpe-nested-'));
    writeTokenizerFiles(nestedDir, createByteLevelTokenizerFiles({ merges: nested }));
    const nestedTokenizer = await loadTokenizer(nestedDir);
    for (const word of ['868', '68', 'Riri', 'Ri', '3']) expect(nestedTokenizer.encode(word)).toHaveLength(1);
    expect(nestedTokenizer.decode(nestedTokenizer.encode('score 3.868 and 68'))).toBe('score 3.868 and 68');
  });

  it('rejects a merge of undefined tokens', () => {
    expect(() => createByteLevelTokenizerFiles({ merges: ['ab c'] })).toThrow(/must join two tokens defined before it/);
  });
});
