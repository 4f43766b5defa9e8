import { describe, expect, it } from 'vitest';
import { createFrameReader, encodeFrame } from './frame-reader';

function collect(maxFrameBytes = 1_000) {
  const frames: unknown[] = [];
  const violations: string[] = [];
  const reader = createFrameReader(maxFrameBytes, (frame) => frames.push(frame), (reason) => violations.push(reason));
  return { reader, frames, violations };
}

describe('frame reader', () => {
  it('reassembles frames split across chunks, and several frames in one chunk', () => {
    const { reader, frames, violations } = collect();
    const bytes = Buffer.concat([encodeFrame({ output: 'é1' }), encodeFrame({ output: '2' })]);
    for (let index = 0; index < bytes.length; index += 3) reader.push(bytes.subarray(index, index + 3));
    reader.push(Buffer.concat([encodeFrame({ a: 1 }), encodeFrame({ b: 2 })]));
    expect(frames).toEqual([{ output: 'é1' }, { output: '2' }, { a: 1 }, { b: 2 }]);
    expect(violations).toEqual([]);
  });

  it('reports garbage, oversized and non-JSON frames once, then ignores the stream', () => {
    const garbage = collect();
    garbage.reader.push(Buffer.from('hello world\n'));
    garbage.reader.push(encodeFrame({ late: true }));
    expect(garbage.violations).toEqual(['bad frame header "hello world"']);
    expect(garbage.frames).toEqual([]);

    const big = collect(10);
    big.reader.push(Buffer.from('AFP 11\n'));
    expect(big.violations).toEqual(['frame of 11 bytes exceeds 10']);

    const notJson = collect();
    notJson.reader.push(Buffer.from('AFP 7\nnotjson'));
    expect(notJson.violations).toEqual(['frame is not JSON']);

    const endless = collect();
    endless.reader.push(Buffer.from('A'.repeat(40)));
    expect(endless.violations).toEqual(['frame header too long']);
  });
});
