import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bfloat16BitsToFloat32,
  bfloat16ToFloat16Array,
  firstNonFiniteHalf,
  float16BitsToFloat32,
  float16ToBfloat16Array,
  float32ToBfloat16Array,
  float32ToBfloat16Bits,
  float32ToFloat16Array,
  float32ToFloat16Bits,
} from './dtype';

describe('half-precision conversion', () => {
  it('decodes every float16 pattern and encodes it back to the same bits', () => {
    const mismatches: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = float16BitsToFloat32(bits);
      const back = float32ToFloat16Bits(value);
      const ok = Number.isNaN(value) ? Number.isNaN(float16BitsToFloat32(back)) : back === bits;
      if (!ok) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
  });

  it('known float16 values: max, min subnormal, overflow to infinity, ties to even', () => {
    expect(float32ToFloat16Bits(65504)).toBe(0x7bff);
    expect(float32ToFloat16Bits(2 ** -24)).toBe(0x0001);
    expect(float32ToFloat16Bits(2 ** -26)).toBe(0x0000);
    expect(float32ToFloat16Bits(70000)).toBe(0x7c00);
    expect(float32ToFloat16Bits(-1)).toBe(0xbc00);
    // 1 + 2^-11 sits exactly between 1 and 1 + 2^-10: ties to the even mantissa (1).
    expect(float32ToFloat16Bits(1 + 2 ** -11)).toBe(0x3c00);
    expect(float32ToFloat16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
  });

  it('float16 rounding is the nearest representable value', () => {
    fc.assert(
      fc.property(fc.float({ min: -60000, max: 60000, noNaN: true }), (value) => {
        const rounded = float16BitsToFloat32(float32ToFloat16Bits(value));
        const ulp = 2 ** (Math.floor(Math.log2(Math.max(Math.abs(value), 2 ** -14))) - 10);
        expect(Math.abs(rounded - value)).toBeLessThanOrEqual(ulp / 2 + 1e-30);
      }),
    );
  });

  it('bfloat16 round trip keeps the top 16 bits and rounds to nearest even', () => {
    const mismatches: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = bfloat16BitsToFloat32(bits);
      if (!Number.isNaN(value) && float32ToBfloat16Bits(value) !== bits) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
    expect(float32ToBfloat16Bits(1 + 2 ** -8)).toBe(0x3f80);
    expect(float32ToBfloat16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(Number.isNaN(bfloat16BitsToFloat32(float32ToBfloat16Bits(Number.NaN)))).toBe(true);
  });
});

describe('bfloat16 to float16 without float32 arrays', () => {
  it('matches the float32 route for every bfloat16 pattern, and is exact in float16 normal range', () => {
    const all = Uint16Array.from({ length: 0x10000 }, (_, bits) => bits);
    const direct = bfloat16ToFloat16Array(all);
    const mismatches: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = bfloat16BitsToFloat32(bits);
      const expected = float32ToFloat16Bits(value);
      const same = Number.isNaN(value) ? Number.isNaN(float16BitsToFloat32(direct[bits]!)) : direct[bits] === expected;
      if (!same) mismatches.push(bits);
      const magnitude = Math.abs(value);
      if (magnitude >= 2 ** -14 && magnitude <= 65504 && float16BitsToFloat32(direct[bits]!) !== value) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
  });

  it('float16 to bfloat16 keeps the value to bfloat16 precision, and non-finite halves are found by index', () => {
    const halves = float32ToFloat16Array([1, -2.5, 65504, 1 + 2 ** -10]);
    expect(Array.from(float16ToBfloat16Array(halves), bfloat16BitsToFloat32)).toEqual([1, -2.5, 65536, 1]);
    expect(firstNonFiniteHalf('float16', halves)).toBe(-1);
    expect(firstNonFiniteHalf('float16', float32ToFloat16Array([0, 1, 70000]))).toBe(2);
    expect(firstNonFiniteHalf('bfloat16', float32ToBfloat16Array([0, Number.NaN]))).toBe(1);
  });
});
