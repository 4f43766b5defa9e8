import { expect } from 'vitest';
import type { HostTensor } from '../dtype/dtype';

/** Same shape, and every entry within `tolerance` of the expected one (absolute). */
export function expectClose(actual: HostTensor, expected: HostTensor, tolerance: number) {
  expect(actual.shape).toEqual(expected.shape);
  let worst = 0;
  for (let index = 0; index < expected.data.length; index++) {
    worst = Math.max(worst, Math.abs(Number(actual.data[index]) - Number(expected.data[index])));
  }
  expect(worst).toBeLessThan(tolerance);
}
