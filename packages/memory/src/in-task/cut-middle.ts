/**
 * Cuts `text` to at most `maxChars` characters by removing its middle and leaving a
 * marker that says how much went: the head of a tool output says what ran, the tail how
 * it ended. When even the marker does not fit, the head alone is kept.
 */
export function cutMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 0) return '';
  const marker = (removed: number) => ` ...[${removed} chars cut]... `;
  // The marker's length depends on the count it shows; the upper bound is enough.
  const room = maxChars - marker(text.length).length;
  if (room < 2) return text.slice(0, maxChars);
  const head = Math.ceil(room / 2);
  const tail = room - head;
  return text.slice(0, head) + marker(text.length - head - tail) + text.slice(text.length - tail);
}
