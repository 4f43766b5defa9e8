import { readFileSync } from 'node:fs';
import { processIds } from './process-tree';

/**
 * Pids of live processes whose real uid is `uid` (Linux /proc). A REPL's teardown waits
 * until none is left: a new REPL under the same uid would otherwise start while a killed
 * fork bomb still fills its process limit.
 */
export function processesOfUid(uid: number): number[] {
  return processIds().filter((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const match = /^Uid:\s+(\d+)/m.exec(status);
      // A zombie holds no resources but its slot; its parent (bwrap's init) reaps it.
      return match !== null && Number(match[1]) === uid && !/^State:\s+Z/m.test(status);
    } catch {
      return false; // ended while we looked
    }
  });
}
