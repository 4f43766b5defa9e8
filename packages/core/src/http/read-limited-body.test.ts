import { describe, expect, it } from 'vitest';
import { AgentFlowError } from '../errors/agentflow-error';
import { formatByteCount, readLimitedBody } from './read-limited-body';

const settings = { maxBytes: 1024, url: 'GET http://127.0.0.1:1/x', setting: 'maxResponseBytes' };

/** A body of `chunks` chunks of `size` bytes, counting how many were pulled. */
function streamed(chunks: number, size: number) {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks) controller.close();
      else {
        pulled++;
        controller.enqueue(new Uint8Array(size).fill(97));
      }
    },
  });
  return { response: new Response(body), pulled: () => pulled };
}

describe('readLimitedBody', () => {
  it('reads a body within the cap as UTF-8, multi-byte characters across chunks included', async () => {
    expect(await readLimitedBody(new Response('héllo'), settings)).toBe('héllo');
    const { response } = streamed(4, 256);
    expect(await readLimitedBody(response, settings)).toHaveLength(1024);
  });

  it('stops at the first chunk over the cap, naming the URL, the cap and the setting', async () => {
    const { response, pulled } = streamed(1_000_000, 512);
    const error = await readLimitedBody(response, settings).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'RESPONSE_TOO_LARGE')).toBe(true);
    expect((error as Error).message).toBe(
      'GET http://127.0.0.1:1/x sent a response body larger than the cap of 1 KiB (1024 bytes) (read stopped after 1536 bytes). ' +
        'Raise maxResponseBytes if replies this large are expected.',
    );
    expect(pulled()).toBeLessThan(6);
  });

  it('refuses a declared content-length over the cap before reading', async () => {
    const response = new Response('x'.repeat(2000), { headers: { 'content-length': '2000' } });
    await expect(readLimitedBody(response, settings)).rejects.toThrow(/larger than the cap of 1 KiB \(1024 bytes\) \(content-length 2000\)/);
  });

  it('formats byte counts', () => {
    expect(formatByteCount(512)).toBe('512 bytes');
    expect(formatByteCount(8 * 1024 * 1024)).toBe('8 MiB (8388608 bytes)');
    expect(formatByteCount(1536)).toBe('1.5 KiB (1536 bytes)');
  });
});
