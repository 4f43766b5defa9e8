/**
 * Cuts a text to at most `maxChars` characters by removing its middle, where tool output
 * is least informative (the head says what ran, the tail how it ended).
 */
export function truncateMiddle(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  const notice = (cut: number) => `\n... [${cut} characters cut] ...\n`;
  const room = Math.max(0, maxChars - notice(text.length).length);
  const head = Math.ceil(room / 2);
  const tail = room - head;
  const cut = text.length - head - tail;
  return { text: text.slice(0, head) + notice(cut) + (tail > 0 ? text.slice(text.length - tail) : ''), truncated: true };
}
