import type { FileHandle } from 'node:fs/promises';

// One write call is limited to about 2 GB; larger tensors go out in 1 GB pieces.
const chunkBytes = 1 << 30;

/** Writes all of `bytes` at `position`, in pieces small enough for one system call each. */
export async function writeAllBytes(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const length = Math.min(chunkBytes, bytes.length - done);
    const { bytesWritten } = await handle.write(bytes, done, length, position + done);
    done += bytesWritten;
  }
}
