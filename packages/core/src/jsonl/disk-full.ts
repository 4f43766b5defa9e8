import { dirname } from 'node:path';
import { AgentFlowError } from '../errors/agentflow-error';
import { formatByteCount } from '../http/read-limited-body';

/** The errno codes of a full device (ENOSPC) and of a used-up quota (EDQUOT). */
const DISK_FULL_ERRNO = new Set(['ENOSPC', 'EDQUOT']);

/**
 * True for a file system error that says the device is full or the quota used up (ENOSPC,
 * EDQUOT), and for the DISK_FULL AgentFlowError {@link diskFullError} made of one.
 */
export function isDiskFullError(error: unknown): boolean {
  if (AgentFlowError.hasCode(error, 'DISK_FULL')) return true;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && DISK_FULL_ERRNO.has(code);
}

/** Settings of {@link diskFullError}. */
export interface DiskFullErrorSettings {
  /**
   * What the failed write left as it was, as a clause of the message. Default: the previous
   * version of `path` is intact (what {@link writeFileAtomic} guarantees).
   */
  kept?: string;
}

/**
 * The DISK_FULL error for an ENOSPC or EDQUOT caught while writing `bytes` bytes to `path` (a
 * file, or a folder written whole): names the directory, the bytes, what was kept and that a
 * resumed run continues once space is freed. `cause` is kept as the error's cause; a caught
 * DISK_FULL of an inner write (a file of a folder being written) is named again as this write's.
 */
export function diskFullError(path: string, bytes: number, cause: unknown, settings: DiskFullErrorSettings = {}): AgentFlowError {
  const inner = AgentFlowError.hasCode(cause, 'DISK_FULL') ? cause.details?.errno : (cause as NodeJS.ErrnoException | null)?.code;
  const errno = typeof inner === 'string' ? inner : 'ENOSPC';
  const quota = errno === 'EDQUOT';
  const directory = dirname(path);
  const kept = settings.kept ?? `the previous version of ${path} is intact`;
  return new AgentFlowError({
    code: 'DISK_FULL',
    message:
      `${quota ? 'Disk quota exceeded' : 'No space left on the device'} (${errno}) of ${directory} while writing ${formatByteCount(bytes)} to ${path}; ` +
      `${kept}. Free at least that much space${quota ? ' or raise the quota' : ''}, then run again with --resume to continue where it stopped.`,
    cause,
    details: { path, directory, bytes, errno },
  });
}
