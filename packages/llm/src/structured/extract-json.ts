/**
 * Finds the last balanced top-level `{...}` in `text` that parses as JSON, skipping braces
 * inside JSON strings. For replies wrapped in prose or code fences, or followed by junk.
 * Returns undefined when there is none.
 */
export function extractLastJsonObject(text: string): unknown {
  const candidates: Array<[number, number]> = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (depth > 0 && inString) {
      if (escaped) escaped = false;
      else if (char === '\\') escaped = true;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"' && depth > 0) inString = true;
    else if (char === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (char === '}' && depth > 0) {
      depth--;
      if (depth === 0) candidates.push([start, i + 1]);
    }
  }
  for (let k = candidates.length - 1; k >= 0; k--) {
    const [from, to] = candidates[k]!;
    try {
      const value: unknown = JSON.parse(text.slice(from, to));
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value;
    } catch {
      // Balanced but not JSON (e.g. Python dict syntax): try an earlier one.
    }
  }
  return undefined;
}
