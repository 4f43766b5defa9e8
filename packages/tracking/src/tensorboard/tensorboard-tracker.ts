import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { ParamValue, Scalar, Tracker, TrackedRunStatus } from '../tracker';
import { fileVersionEvent, hparamsEndEvent, hparamsStartEvent, scalarsEvent, tfRecord } from './event-file';

export interface TensorBoardTrackerSettings {
  /** The folder of this run's event files: one TensorBoard run (`tensorboard --logdir` its parent to compare runs). Created as needed. */
  dir: string;
  /** Told once, when writing fails; the tracker then stops writing. */
  warn: (message: string) => void;
  /** The clock, in milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /** The host named in the file name (default the machine's). */
  hostname?: string;
}

/** Opens `events.out.tfevents.<seconds>.<host>` in `dir`, or with `.<n>` after it when a file of that name exists (two processes in one second). */
function openEventFile(dir: string, nowMs: number, host: string): { fd: number; path: string } {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `events.out.tfevents.${Math.floor(nowMs / 1000)}.${host}`);
  for (let attempt = 0; ; attempt++) {
    const path = attempt === 0 ? base : `${base}.${attempt}`;
    try {
      return { fd: openSync(path, 'wx'), path };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 100) throw error;
    }
  }
}

/**
 * A tracker that writes TensorBoard event files itself (TFRecord framing, `Event` protobufs):
 * scalars as `simple_value`, params as the hparams plugin's session. Each call writes its records
 * at once (one small synchronous write, no fsync), so TensorBoard shows a run while it trains.
 * The file opens on the first call; a failure to open or write warns once and stops the tracker.
 */
export function createTensorBoardTracker(settings: TensorBoardTrackerSettings): Tracker {
  const now = settings.now ?? Date.now;
  const dir = resolve(settings.dir);
  let file: { fd: number; path: string } | undefined;
  let failed = false;

  const write = (records: () => Uint8Array[]) => {
    if (failed) return;
    try {
      if (!file) {
        file = openEventFile(dir, now(), settings.hostname ?? osHostname());
        writeSync(file.fd, tfRecord(fileVersionEvent(now())));
      }
      for (const record of records()) writeSync(file.fd, tfRecord(record));
    } catch (error) {
      failed = true;
      settings.warn(`TensorBoard (${dir}): cannot write event files: ${(error as Error).message}. Tracking to it stops; the run goes on and metrics.jsonl keeps every row.`);
    }
  };

  return {
    name: `TensorBoard (${dir})`,
    logParams(params: Readonly<Record<string, ParamValue>>) {
      write(() => [hparamsStartEvent(now(), params)]);
    },
    logScalars(scalars: readonly Scalar[]) {
      // One event per step and time: the values of one metrics row travel together.
      const events = new Map<string, { step: number; wallTimeMs: number; values: Array<{ tag: string; value: number }> }>();
      for (const scalar of scalars) {
        const key = `${scalar.step}:${scalar.wallTimeMs}`;
        const group = events.get(key) ?? { step: scalar.step, wallTimeMs: scalar.wallTimeMs, values: [] };
        group.values.push({ tag: scalar.tag, value: scalar.value });
        events.set(key, group);
      }
      write(() => [...events.values()].map((group) => scalarsEvent(group.wallTimeMs, group.step, group.values)));
    },
    logArtifact() {
      // TensorBoard keeps no files beside its events.
    },
    async finish(status: TrackedRunStatus) {
      write(() => [hparamsEndEvent(now(), status === 'finished' ? 'success' : 'failure')]);
      if (file) {
        try {
          closeSync(file.fd);
        } catch {
          // Closing a descriptor we wrote through cannot lose data that matters more than the run.
        }
        file = undefined;
      }
      failed = true;
    },
  };
}
