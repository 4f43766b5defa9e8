import { isUtf8 } from 'node:buffer';

/**
 * The offset of the first byte of `bytes` that does not begin or continue well-formed UTF-8
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or -1 when all of it
 * is UTF-8. A sequence cut short (by the end or by a byte that cannot continue it) is reported
 * at its lead byte. One pass, no allocation; the common all-valid case is a native check.
 */
export function firstInvalidUtf8Byte(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index]!;
    if (lead < 0x80) {
      index++;
      continue;
    }
    // The bytes that follow the lead, and the range the first of them must fall in (RFC 3629, section 4).
    let follow: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) follow = 1;
    else if (lead === 0xe0) [follow, low] = [2, 0xa0];
    else if (lead === 0xed) [follow, high] = [2, 0x9f];
    else if (lead >= 0xe1 && lead <= 0xef) follow = 2;
    else if (lead === 0xf0) [follow, low] = [3, 0x90];
    else if (lead === 0xf4) [follow, high] = [3, 0x8f];
    else if (lead >= 0xf1 && lead <= 0xf3) follow = 3;
    else return index;
    for (let next = 1; next <= follow; next++) {
      const byte = bytes[index + next];
      const [from, to] = next === 1 ? [low, high] : [0x80, 0xbf];
      if (byte === undefined || byte < from || byte > to) return index;
    }
    index += follow + 1;
  }
  return -1;
}

/** The 1-based line of byte `offset`: one more than the line feeds before it. */
export function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let index = bytes.indexOf(0x0a); index !== -1 && index < offset; index = bytes.indexOf(0x0a, index + 1)) line++;
  return line;
}
