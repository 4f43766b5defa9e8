import { readFileSync, readdirSync } from 'node:fs';
import type { ReplSession } from './repl-session';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Pids of live processes whose real uid is `uid` (Linux /proc). */
export function processesOfUid(uid: number): number[] {
  const pids: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const match = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'));
      if (match && Number(match[1]) === uid) pids.push(Number(name));
    } catch {
      // ended while we looked
    }
  }
  return pids;
}

/**
 * Kills a session and waits (bounded) until it is gone: bwrap has exited and, when the
 * sandbox ran under its own uid, no process of that uid is left. A new REPL under the same
 * uid would otherwise start while a killed fork bomb still fills its process limit.
 */
export async function tearDownSession(session: ReplSession, uid: number | undefined, graceMs = 3_000): Promise<void> {
  session.kill();
  const deadline = Date.now() + graceMs;
  // The sandbox's pipes are unref'd; these timers keep the event loop alive meanwhile.
  await Promise.race([session.closed, sleep(graceMs)]);
  if (uid === undefined) return;
  while (Date.now() < deadline && processesOfUid(uid).length > 0) await sleep(20);
}
