/** setTimeout's largest delay (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Runs `callback` after `ms` milliseconds, however long: a delay over setTimeout's limit
 * is waited in pieces instead of overflowing (Node fires an overflowed timer after 1 ms).
 * Non-finite or negative delays are rejected by the caller's validation; here Infinity
 * never fires. Returns the function that cancels it.
 */
export function setLongTimeout(callback: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (left: number) => {
    if (left === Number.POSITIVE_INFINITY) return;
    const piece = Math.min(Math.max(0, left), MAX_TIMER_MS);
    timer = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : callback()), piece);
  };
  arm(ms);
  return () => clearTimeout(timer);
}
