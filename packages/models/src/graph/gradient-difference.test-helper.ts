import { expect } from 'vitest';

/** The largest difference between two gradient sets, relative to the largest gradient entry. */
export function relativeDifference(actual: Map<string, Float32Array>, expected: Map<string, Float32Array>): number {
  let difference = 0;
  let scale = 0;
  for (const [name, values] of expected) {
    const other = actual.get(name)!;
    expect(other.length).toBe(values.length);
    values.forEach((value, index) => {
      difference = Math.max(difference, Math.abs(value - other[index]!));
      scale = Math.max(scale, Math.abs(value));
    });
  }
  expect(scale).toBeGreaterThan(0);
  return difference / scale;
}
