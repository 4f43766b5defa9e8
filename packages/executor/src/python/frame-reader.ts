/**
 * Parses `AFP <bytes>\n<json>` frames from the sandbox's stdout. Anything else, or a frame
 * larger than `maxFrameBytes`, is a protocol violation: the session is then killed, since
 * only code inside the sandbox could have written it.
 */
export interface FrameReader {
  push(chunk: Buffer): void;
}

export function createFrameReader(
  maxFrameBytes: number,
  onFrame: (message: unknown) => void,
  onViolation: (reason: string) => void,
): FrameReader {
  let buffer: Buffer = Buffer.alloc(0);
  let failed = false;
  const fail = (reason: string) => {
    failed = true;
    buffer = Buffer.alloc(0);
    onViolation(reason);
  };
  return {
    push(chunk) {
      if (failed) return;
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      while (buffer.length > 0) {
        const newline = buffer.indexOf(0x0a);
        if (newline < 0) {
          if (buffer.length > 32) fail('frame header too long');
          return;
        }
        const header = buffer.subarray(0, newline).toString('latin1');
        const match = /^AFP (\d{1,12})$/.exec(header);
        if (!match) return fail(`bad frame header ${JSON.stringify(header.slice(0, 40))}`);
        const length = Number(match[1]);
        if (length > maxFrameBytes) return fail(`frame of ${length} bytes exceeds ${maxFrameBytes}`);
        if (buffer.length < newline + 1 + length) return;
        const payload = buffer.subarray(newline + 1, newline + 1 + length).toString('utf8');
        buffer = buffer.subarray(newline + 1 + length);
        let message: unknown;
        try {
          message = JSON.parse(payload);
        } catch {
          return fail('frame is not JSON');
        }
        onFrame(message);
      }
    },
  };
}

/** Encodes one request frame. */
export function encodeFrame(message: unknown): Buffer {
  const payload = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from(`AFP ${payload.length}\n`, 'latin1'), payload]);
}
