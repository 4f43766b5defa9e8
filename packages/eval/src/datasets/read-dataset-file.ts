import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { AgentFlowError, fileKindOf, firstInvalidUtf8Byte, formatByteCount, formatZodIssues, lineOfByte } from '@agentflow/core';
import { z } from 'zod';

/**
 * How much of a benchmark file the loaders read. A loader returns every item at once and JSON
 * or CSV are not line-oriented, so the whole file is read, up to a size stated in the refusal,
 * rather than streamed: what it returns would not fit a smaller budget anyway.
 */
export const datasetReadLimitsSchema = z
  .object({
    maxBytes: z
      .number()
      .int()
      .positive()
      .default(128 * 1024 * 1024)
      .describe(
        'Bytes of one dataset file at most (128 MiB: ~190x the largest shipped benchmark, medqa.json at 672 KiB; a file this size parses in well under 1 GB). A larger file is refused from its size before any byte is read.',
      ),
    maxLineBytes: z
      .number()
      .int()
      .positive()
      .default(8 * 1024 * 1024)
      .describe('Bytes of one JSONL line (one record) at most (8 MiB: a record with a long context document is a few hundred KiB).'),
    maxDepth: z
      .number()
      .int()
      .positive()
      .default(64)
      .describe('Deepest nesting of lists and objects in a record (a JSON file counts its outer array); benchmark records nest a few levels.'),
  })
  .strict();

/** Limits of the benchmark loaders; every field optional, defaults in {@link datasetReadLimitsSchema}. */
export type DatasetReadLimits = z.input<typeof datasetReadLimitsSchema>;
/** {@link DatasetReadLimits} with every default filled in. */
export type ResolvedDatasetReadLimits = z.output<typeof datasetReadLimitsSchema>;

/** Fills in the defaults; a limit that is not a positive integer is an INVALID_ARGUMENT. */
export function resolveDatasetReadLimits(limits: DatasetReadLimits | undefined): ResolvedDatasetReadLimits {
  const parsed = datasetReadLimitsSchema.safeParse(limits ?? {});
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Invalid dataset read limits: ${formatZodIssues(parsed.error, 'limits').join('; ')}.`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}

const CHUNK_BYTES = 1024 * 1024;

function cannotRead(path: string, cause: unknown): AgentFlowError {
  return new AgentFlowError({
    code: 'NOT_FOUND',
    message: `Cannot read benchmark file ${path}: ${(cause as Error).message}`,
    cause,
    details: { path },
  });
}

function notRegular(path: string, stats: Stats): AgentFlowError {
  return new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `${path}: is ${fileKindOf(stats)}; a benchmark file must be a regular file (.csv, .json or .jsonl).`,
    details: { path, reason: 'not-a-regular-file' },
  });
}

function tooLarge(path: string, size: string, maxBytes: number): AgentFlowError {
  return new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message:
      `${path}: is ${size}; a benchmark file is read whole and may be at most ${formatByteCount(maxBytes)}. ` +
      'Split it, or raise limits.maxBytes if memory allows.',
    details: { path, maxBytes, reason: 'file-too-large' },
  });
}

/**
 * The bytes of a benchmark file, checked before they are read: a regular file (a FIFO would
 * block the open, a device such as /dev/zero never ends; `stat` follows links, so a link is
 * judged by its target), at most `maxBytes` by `stat`, and again while reading (a file that
 * grows, or one whose `stat` size is 0 as under /proc, stops one chunk past the cap).
 */
export function readDatasetBytes(path: string, limits: ResolvedDatasetReadLimits): Buffer {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (cause) {
    throw cannotRead(path, cause);
  }
  if (!stats.isFile()) throw notRegular(path, stats);
  if (stats.size > limits.maxBytes) throw tooLarge(path, formatByteCount(stats.size), limits.maxBytes);
  let descriptor: number;
  try {
    // O_NONBLOCK: were the path swapped for a FIFO after the stat, the open would not block.
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw cannotRead(path, cause);
  }
  try {
    const opened = fstatSync(descriptor);
    if (!opened.isFile()) throw notRegular(path, opened);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, limits.maxBytes + 1 - total));
      const read = readSync(descriptor, chunk, 0, chunk.length, null);
      if (read === 0) break;
      chunks.push(chunk.subarray(0, read));
      total += read;
      if (total > limits.maxBytes) throw tooLarge(path, `more than ${formatByteCount(limits.maxBytes)} (read stopped there)`, limits.maxBytes);
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(descriptor);
  }
}

/**
 * The UTF-8 text of `bytes` (a leading byte-order mark dropped). A byte that is not UTF-8 is a
 * PARSE_ERROR naming the file, the byte, its offset and line, never a U+FFFD in a question.
 */
export function decodeDatasetText(bytes: Buffer, path: string): string {
  const invalid = firstInvalidUtf8Byte(bytes);
  if (invalid !== -1) {
    const line = lineOfByte(bytes, invalid);
    throw new AgentFlowError({
      code: 'PARSE_ERROR',
      message: `${path}:${line}: not UTF-8 text: byte 0x${bytes[invalid]!.toString(16).padStart(2, '0')} at byte offset ${invalid} (line ${line}); save the file as UTF-8.`,
      details: { path, line, offset: invalid, reason: 'invalid-utf8' },
    });
  }
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return bytes.toString('utf8', bom);
}

/** A benchmark file as text: {@link readDatasetBytes}, then {@link decodeDatasetText}. */
export function readDatasetText(path: string, limits: ResolvedDatasetReadLimits): string {
  return decodeDatasetText(readDatasetBytes(path, limits), path);
}
