import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A task's scratch folder with a cap on its total size and file count. As root it is a
 * tmpfs of its own (`size=`, `nr_inodes=`), mounted on the host so the host can read what
 * the code wrote, and removed by unmounting it. Where mounting is not allowed it is a
 * plain folder that is measured after every call (the code can overshoot within a call,
 * by at most the file-size limit per file written).
 */
export interface ScratchFolder {
  readonly path: string;
  /** "tmpfs (size=1073741824, nr_inodes=10001)" or "folder, checked after each call: <why no tmpfs>". */
  readonly mechanism: string;
  /** Past the cap, a message saying so (and the contents are removed); else undefined. */
  enforce(): string | undefined;
  /** Removes it; returns undefined, or what is left and why. */
  remove(): string | undefined;
}

export interface ScratchSettings {
  root: string;
  name: string;
  maxBytes: number;
  maxFiles: number;
  /** Owner of the folder (the sandbox uid, as root). */
  uid: number | undefined;
  /** Try a tmpfs mount (root only). */
  mount: boolean;
}

export function createScratchFolder(settings: ScratchSettings): ScratchFolder {
  mkdirSync(settings.root, { recursive: true, mode: 0o755 });
  // The owner's pid in the name lets a later process remove what a killed one left (reapStaleScratchFolders).
  const path = mkdtempSync(join(settings.root, `${settings.name}${SCRATCH_OWNER_MARK}${process.pid}-`));
  let mounted = false;
  let why = 'not root';
  if (settings.mount) {
    const options = [`size=${settings.maxBytes}`, `nr_inodes=${settings.maxFiles + 1}`, 'mode=0700'];
    if (settings.uid !== undefined) options.push(`uid=${settings.uid}`, `gid=${settings.uid}`);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', options.join(','), 'agentflow-scratch', path], { stdio: ['ignore', 'ignore', 'pipe'] });
      mounted = true;
    } catch (error) {
      why = `mount failed: ${String((error as { stderr?: Buffer }).stderr ?? (error as Error).message).trim()}`;
    }
  }
  if (!mounted && settings.uid !== undefined) chownSync(path, settings.uid, settings.uid);
  const mechanism = mounted
    ? `tmpfs (size=${settings.maxBytes}, nr_inodes=${settings.maxFiles + 1})`
    : `folder, checked after each call (${why})`;
  return {
    path,
    mechanism,
    enforce() {
      if (mounted) return undefined;
      const usage = measureTree(path, settings.maxFiles * 2);
      if (usage.bytes <= settings.maxBytes && usage.files <= settings.maxFiles) return undefined;
      for (const entry of readdirSync(path)) removeTree(join(path, entry));
      return (
        `The scratch folder held ${usage.files} files and ${usage.bytes} bytes, over its cap of ` +
        `${settings.maxFiles} files and ${settings.maxBytes} bytes; its contents were removed.`
      );
    },
    remove() {
      if (mounted) {
        const failed = unmountScratch(path);
        if (failed !== undefined) return failed;
        mounted = false;
      }
      return removeScratch(path);
    },
  };
}

/** What separates a scratch folder's task name from its owner's pid: `<task>-p<pid>-XXXXXX`. */
export const SCRATCH_OWNER_MARK = '-p';

/** Unmounts the tmpfs at `path` (lazily if it is busy); returns why it could not, or undefined. */
export function unmountScratch(path: string): string | undefined {
  try {
    execFileSync('umount', [path], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch {
    try {
      execFileSync('umount', ['-l', path], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (error) {
      return `${path}: umount failed (${String((error as { stderr?: Buffer }).stderr ?? '').trim()})`;
    }
  }
  return undefined;
}

/** Removes the (unmounted) folder `path`; returns what is left and why, or undefined. */
export function removeScratch(path: string): string | undefined {
  const errors = removeTree(path);
  if (existsSync(path)) return `${path} is still there${errors.length > 0 ? `: ${errors.slice(0, 3).join('; ')}` : ''}`;
  return undefined;
}

/** Files (every non-folder entry and folder counts as one) and bytes under `root`, iteratively, up to `maxEntries`. */
export function measureTree(root: string, maxEntries: number): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const pending = [root];
  while (pending.length > 0 && files <= maxEntries) {
    const folder = pending.pop() as string;
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      files += 1;
      const child = join(folder, entry.name);
      if (entry.isDirectory()) pending.push(child);
      else {
        try {
          bytes += lstatSync(child).blocks * 512;
        } catch {
          // gone
        }
      }
    }
  }
  return { files, bytes };
}

/** Folders whose path is longer than this are moved up before they are entered: PATH_MAX is 4,096, and every lookup walks the whole path. */
const FLATTEN_AT = 256;

/**
 * Removes `root` and everything under it without recursion, so no depth of folders can
 * overflow a stack: a folder whose path grows long is first renamed to a short name beside
 * the root. Returns the errors met (empty when all is gone).
 */
export function removeTree(root: string): string[] {
  const errors: string[] = [];
  let stat: import('node:fs').Stats;
  try {
    stat = lstatSync(root);
  } catch {
    return errors;
  }
  if (!stat.isDirectory()) {
    try {
      unlinkSync(root);
    } catch (error) {
      errors.push(`${root}: ${(error as NodeJS.ErrnoException).code}`);
    }
    return errors;
  }
  const stack: Array<{ path: string; expanded: boolean }> = [{ path: root, expanded: false }];
  let moved = 0;
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { path: string; expanded: boolean };
    if (top.expanded) {
      stack.pop();
      try {
        rmdirSync(top.path);
      } catch (error) {
        errors.push(`${top.path.slice(0, 200)}: ${(error as NodeJS.ErrnoException).code}`);
      }
      continue;
    }
    top.expanded = true;
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(top.path, { withFileTypes: true });
    } catch {
      try {
        chmodSync(top.path, 0o700); // a folder the code made unreadable (matters when not root)
        entries = readdirSync(top.path, { withFileTypes: true });
      } catch (error) {
        errors.push(`${top.path.slice(0, 200)}: ${(error as NodeJS.ErrnoException).code}`);
        continue;
      }
    }
    for (const entry of entries) {
      let child = join(top.path, entry.name);
      if (!entry.isDirectory()) {
        try {
          unlinkSync(child);
        } catch (error) {
          errors.push(`${child.slice(0, 200)}: ${(error as NodeJS.ErrnoException).code}`);
        }
        continue;
      }
      if (child.length > FLATTEN_AT) {
        const short = join(root, `.agentflow-flattened-${process.pid}-${Date.now()}-${moved}`);
        moved += 1;
        try {
          renameSync(child, short);
          child = short;
        } catch (error) {
          errors.push(`${child.slice(0, 200)}...: ${(error as NodeJS.ErrnoException).code}`);
          continue;
        }
      }
      stack.push({ path: child, expanded: false });
    }
  }
  return errors;
}
