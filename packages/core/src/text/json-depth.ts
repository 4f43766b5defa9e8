/** Where JSON text first nests deeper than allowed: the index of the bracket, and its 1-based line. */
export interface DepthExcess {
  index: number;
  line: number;
}

/**
 * Scans JSON text for `[` and `{` nested deeper than `maxDepth`, outside strings (a backslash
 * escapes the next character inside one), without parsing it: one pass, constant memory, so
 * a line like `[[[[...]]]]` 100,000 deep is refused before `JSON.parse` or anything after it
 * recurses into the value. Returns undefined when the text stays within the bound.
 */
export function findJsonDepthExcess(text: string, maxDepth: number): DepthExcess | undefined {
  let depth = 0;
  let line = 1;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x0a) line++;
    if (inString) {
      if (code === 0x5c) index++; // backslash: the next character is escaped (a JSON string holds no raw newline)
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > maxDepth) return { index, line };
    } else if (code === 0x5d || code === 0x7d) depth = Math.max(0, depth - 1);
  }
  return undefined;
}
