import { readFileSync } from 'node:fs';

/**
 * When process `pid` started, in clock ticks since boot (field 22 of `/proc/<pid>/stat`), or
 * undefined when there is no such process or no `/proc` (not Linux). A pid and its start time
 * name one process: a pid reused by a later process has another start time.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether this system has `/proc/<pid>/stat` (Linux), so that {@link processStartTime} can tell. */
export function hasProcStat(): boolean {
  return processStartTime(process.pid) !== undefined;
}

/**
 * Whether the process `pid` that started at `startTime` (see {@link processStartTime}) still
 * runs. Without `/proc` only the pid can be checked (signal 0), and without a recorded start
 * time a live pid counts as the same process.
 */
export function isProcessAlive(pid: number, startTime: string | null): boolean {
  if (hasProcStat()) {
    const now = processStartTime(pid);
    if (now === undefined) return false;
    return startTime === null || now === startTime;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
