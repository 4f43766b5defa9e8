import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeSessionStartHparams, readEventFiles, readScalars, readTfRecords } from '../testing/read-event-files';
import { crc32c } from './crc32c';
import { createTensorBoardTracker } from './tensorboard-tracker';

const fresh = () => mkdtempSync(join(tmpdir(), 'agentflow-tb-'));

describe('createTensorBoardTracker', () => {
  it('computes CRC-32C as TFRecord needs it (the standard check value)', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
  });

  it('writes event files that an independent reader decodes: version first, every scalar at its step, the hparams session', async () => {
    const dir = join(fresh(), 'run-1');
    const warnings: string[] = [];
    let clock = 1_767_225_600_000;
    const tracker = createTensorBoardTracker({ dir, warn: (message) => warnings.push(message), now: () => clock++, hostname: 'host-a' });
    tracker.logParams({ 'train.learningRate': 0.002, 'train.credit.kind': 'process-sum', 'policy.recompute': false });
    tracker.logScalars([
      { tag: 'train/reward', step: 1, value: 0.25, wallTimeMs: 1_767_225_601_000 },
      { tag: 'train/loss', step: 1, value: 0.1, wallTimeMs: 1_767_225_601_000 },
      { tag: 'train/reward', step: 2, value: 0.75, wallTimeMs: 1_767_225_602_000 },
      { tag: 'eval/accuracy', step: 2, value: 0.5, wallTimeMs: 1_767_225_602_000 },
      { tag: 'summary/after.accuracy', step: 123_456_789_012, value: 1e-7, wallTimeMs: 1_767_225_603_000 },
    ]);
    await tracker.finish('finished');
    const [file, ...others] = readEventFiles(dir);
    expect(others).toEqual([]);
    expect(file?.file).toBe('events.out.tfevents.1767225600.host-a');
    expect(file?.events[0]).toMatchObject({ fileVersion: 'brain.Event:2', step: 0 });
    expect(file?.events[0]?.wallTime).toBeCloseTo(1_767_225_600.001, 3);
    expect(Object.fromEntries(readScalars(dir))).toEqual({
      'train/reward': [[1, 0.25], [2, 0.75]],
      'train/loss': [[1, Math.fround(0.1)]],
      'eval/accuracy': [[2, 0.5]],
      'summary/after.accuracy': [[123_456_789_012, Math.fround(1e-7)]],
    });
    const start = file?.events.flatMap((event) => event.values).find((value) => value.tag === '_hparams_/session_start_info');
    expect(start?.plugin).toBe('hparams');
    expect(decodeSessionStartHparams(start?.content as Uint8Array)).toEqual({ 'train.learningRate': 0.002, 'train.credit.kind': 'process-sum', 'policy.recompute': false });
    expect(file?.events.at(-1)?.values[0]).toMatchObject({ tag: '_hparams_/session_end_info', plugin: 'hparams' });
    expect(warnings).toEqual([]);
  });

  it("checks both CRCs: a flipped byte in a record's data is found", async () => {
    const dir = fresh();
    const tracker = createTensorBoardTracker({ dir, warn: () => {}, hostname: 'h' });
    tracker.logScalars([{ tag: 'train/reward', step: 3, value: 1, wallTimeMs: 0 }]);
    await tracker.finish('finished');
    const path = join(dir, readdirSync(dir)[0] as string);
    const bytes = new Uint8Array(readFileSync(path));
    bytes[bytes.length - 10] = (bytes[bytes.length - 10] as number) ^ 0x01;
    writeFileSync(path, bytes);
    expect(() => readTfRecords(new Uint8Array(readFileSync(path)))).toThrow(/data CRC of the record at byte \d+ does not match/);
  });

  it('a folder it cannot make warns once, naming it, and every later call returns quietly', async () => {
    const blocker = join(fresh(), 'a-file');
    writeFileSync(blocker, 'not a folder');
    const warnings: string[] = [];
    const tracker = createTensorBoardTracker({ dir: join(blocker, 'run'), warn: (message) => warnings.push(message) });
    tracker.logParams({ seed: 1 });
    tracker.logScalars([{ tag: 'train/reward', step: 1, value: 1, wallTimeMs: 0 }]);
    await tracker.finish('failed');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`TensorBoard (${join(blocker, 'run')}): cannot write event files`);
    expect(warnings[0]).toContain('the run goes on and metrics.jsonl keeps every row');
  });
});
