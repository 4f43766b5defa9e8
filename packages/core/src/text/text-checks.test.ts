import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstInvalidUtf8Byte, lineOfByte } from './first-invalid-utf8';
import { findJsonDepthExcess } from './json-depth';

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));

describe('firstInvalidUtf8Byte', () => {
  it('agrees with a fatal TextDecoder on random bytes, and the prefix before it decodes', () => {
    const decodes = (input: Uint8Array) => {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(input);
        return true;
      } catch {
        return false;
      }
    };
    // Bytes drawn mostly from the lead and continuation ranges, where the edge cases are.
    const byte = fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constantFrom(0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0x80, 0xbf, 0x9f, 0xa0, 0x8f, 0x90));
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 12 }), (values) => {
        const input = Uint8Array.from(values);
        const offset = firstInvalidUtf8Byte(input);
        expect(offset === -1).toBe(decodes(input));
        if (offset !== -1) {
          expect(decodes(input.subarray(0, offset))).toBe(true);
          expect(decodes(input.subarray(0, offset + 1))).toBe(false);
        }
      }),
      { numRuns: 3000, seed: 33 },
    );
  });

  it('names the lead byte of an overlong form, a surrogate, a code point past U+10FFFF and a cut sequence', () => {
    expect(firstInvalidUtf8Byte(bytes('ok é ✓ 😀'))).toBe(-1);
    expect(firstInvalidUtf8Byte(bytes('ab', [0xc0, 0xaf]))).toBe(2);
    expect(firstInvalidUtf8Byte(bytes('abc', [0xed, 0xa0, 0x80]))).toBe(3);
    expect(firstInvalidUtf8Byte(bytes('a', [0xf4, 0x90, 0x80, 0x80]))).toBe(1);
    expect(firstInvalidUtf8Byte(bytes('abcd', [0xe2, 0x9c]))).toBe(4);
  });
});

describe('findJsonDepthExcess', () => {
  it('counts brackets outside strings only, escaped quotes included', () => {
    expect(findJsonDepthExcess('{"q": "[[[[{{{{", "r": "\\"[[["}', 2)).toBeUndefined();
    expect(findJsonDepthExcess('[[[1]]]', 3)).toBeUndefined();
    expect(findJsonDepthExcess('[[[1]]]', 2)).toEqual({ index: 2, line: 1 });
    expect(findJsonDepthExcess('[\n{"a":\n[[]]}]', 3)).toEqual({ index: 9, line: 3 });
  });
});

describe('lineOfByte', () => {
  it('counts the line feeds before the offset', () => {
    const text = bytes('a\nbc\n\nd');
    expect([0, 1, 2, 4, 5, 6].map((offset) => lineOfByte(text, offset))).toEqual([1, 1, 2, 2, 3, 4]);
  });
});
