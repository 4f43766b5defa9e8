/**
 * GPT-2's byte-level alphabet, which Qwen's tokenizer.json also uses: every byte maps to one
 * printable code point (printable ASCII and Latin-1 map to themselves, the rest to 256+n), so a
 * BPE vocabulary can be written as JSON strings. This is the published mapping, rebuilt here.
 */
export function byteToUnicodeTable(): string[] {
  const printable: number[] = [];
  for (let byte = 33; byte <= 126; byte++) printable.push(byte);
  for (let byte = 161; byte <= 172; byte++) printable.push(byte);
  for (let byte = 174; byte <= 255; byte++) printable.push(byte);
  const table = new Array<string>(256);
  for (const byte of printable) table[byte] = String.fromCodePoint(byte);
  let next = 0;
  for (let byte = 0; byte < 256; byte++) {
    if (table[byte] === undefined) {
      table[byte] = String.fromCodePoint(256 + next);
      next++;
    }
  }
  return table;
}

/** The inverse table: code point -> byte. */
export function unicodeToByteMap(): Map<string, number> {
  const map = new Map<string, number>();
  byteToUnicodeTable().forEach((character, byte) => {
    map.set(character, byte);
  });
  return map;
}

/** The bytes a byte-level vocabulary entry stands for, or undefined when it is not byte-level text. */
export function byteLevelTokenBytes(token: string, inverse: Map<string, number>): Uint8Array | undefined {
  const bytes: number[] = [];
  for (const character of token) {
    const byte = inverse.get(character);
    if (byte === undefined) return undefined;
    bytes.push(byte);
  }
  return Uint8Array.from(bytes);
}
