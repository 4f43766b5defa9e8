import { AgentFlowError } from '../errors/agentflow-error';

/** How much of a response body may be read, and what to name when it is too much. */
export interface ReadLimitedBodySettings {
  /** Bytes of body at most; one byte more stops the read. */
  maxBytes: number;
  /** The request, as the error should name it (`POST http://...`). */
  url: string;
  /** The setting that raises the cap, named in the error (`maxResponseBytes`). */
  setting: string;
}

/** `1048576` as `1 MiB (1048576 bytes)`, for messages. */
export function formatByteCount(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${bytes} bytes`;
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return `${shown} ${units[unit]} (${bytes} bytes)`;
}

function tooLarge(settings: ReadLimitedBodySettings, received: string): AgentFlowError {
  return new AgentFlowError({
    code: 'RESPONSE_TOO_LARGE',
    message:
      `${settings.url} sent a response body larger than the cap of ${formatByteCount(settings.maxBytes)} (${received}). ` +
      `Raise ${settings.setting} if replies this large are expected.`,
    details: { url: settings.url, maxBytes: settings.maxBytes, setting: settings.setting },
  });
}

/**
 * Reads a fetch `Response` body as UTF-8 text, streaming, and stops at `maxBytes`: a
 * declared `content-length` over the cap is refused before any byte is read, and a body
 * that grows past it is cancelled at the first chunk over (so memory stays near the cap
 * whatever the server sends, streamed NDJSON/SSE included). Throws RESPONSE_TOO_LARGE
 * naming the URL, the cap and the setting. The caller should also abort its request.
 */
export async function readLimitedBody(response: Response, settings: ReadLimitedBodySettings): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > settings.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(settings, `content-length ${declared}`);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > settings.maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(settings, `read stopped after ${total} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}
