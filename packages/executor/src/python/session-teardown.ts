import { readFileSync, readdirSync } from 'node:fs';

/**
 * Pids of live processes whose real uid is `uid` (Linux /proc). A REPL's teardown waits
 * until none is left: a new REPL under the same uid would otherwise start while a killed
 * fork bomb still fills its process limit.
 */
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
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const match = /^Uid:\s+(\d+)/m.exec(status);
      // A zombie holds no resources but its slot; its parent (bwrap's init) reaps it.
      if (match && Number(match[1]) === uid && !/^State:\s+Z/m.test(status)) pids.push(Number(name));
    } catch {
      // ended while we looked
    }
  }
  return pids;
}
