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

  it('rejects a merge of undefined tokens', () => {
    expect(() => createByteLevelTokenizerFiles({ merges: ['ab c'] })).toThrow(/must join two tokens defined before it/);
  });
});
