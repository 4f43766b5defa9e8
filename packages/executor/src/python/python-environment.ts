import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

/** The host facts the sandbox is built from, or what is missing. */
export type PythonEnvironment =
  | {
      kind: 'ready';
      bwrap: string;
      /** bubblewrap's version as [major, minor, patch] ([0, 0, 0] when it would not say). */
      bwrapVersion: [number, number, number];
      executable: string;
      prefixes: string[];
      version: string;
    }
  | { kind: 'missing'; message: string };

/** Finds an executable the way a shell would: a path as given, a bare name on PATH. */
export function findExecutable(name: string, path = process.env.PATH ?? ''): string | undefined {
  const candidates = name.includes('/') ? [name] : path.split(delimiter).filter(Boolean).map((folder) => join(folder, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next folder
    }
  }
  return undefined;
}

const PROBE = [
  'import json, os, sys',
  'paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}',
  "print(json.dumps({'executable': os.path.realpath(sys.executable), 'prefixes': sorted(paths), 'version': sys.version.split()[0]}))",
].join('\n');

/**
 * Resolves bwrap and the real Python executable with its prefixes (a pyenv shim or a venv
 * link is followed on the host, with the host's environment, once).
 */
export async function resolvePythonEnvironment(python: string, bwrapPath: string): Promise<PythonEnvironment> {
  const bwrap = findExecutable(bwrapPath);
  if (!bwrap) {
    return {
      kind: 'missing',
      message:
        `The python tool needs bubblewrap for its sandbox, but "${bwrapPath}" was not found` +
        `${bwrapPath.includes('/') ? '' : ' on PATH'}. Install it (Debian/Ubuntu: apt-get install bubblewrap); ` +
        'code is never run unsandboxed.',
    };
  }
  const interpreter = findExecutable(python);
  if (!interpreter) {
    return { kind: 'missing', message: `The python tool could not find the interpreter "${python}" (apt-get install python3).` };
  }
  return new Promise((resolve) => {
    execFile(interpreter, ['-I', '-c', PROBE], { timeout: 20_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        resolve({
          kind: 'missing',
          message: `The python tool could not run "${interpreter}": ${error.message.split('\n')[0]} ${stderr.trim()}`.trim(),
        });
        return;
      }
      try {
        const probe = JSON.parse(stdout.trim().split('\n').pop() ?? '') as { executable: string; prefixes: string[]; version: string };
        const prefixes = probe.prefixes.filter((prefix) => existsSync(prefix));
        if (!prefixes.some((prefix) => probe.executable.startsWith(`${prefix}/`))) prefixes.push(dirname(probe.executable));
        resolve({ kind: 'ready', bwrap, bwrapVersion: bwrapVersion(bwrap), executable: probe.executable, prefixes, version: probe.version });
      } catch {
        resolve({ kind: 'missing', message: `The python tool could not read the answer of "${interpreter}": ${stdout.slice(0, 200)}` });
      }
    });
  });
}

/** "bubblewrap 0.8.0" -> [0, 8, 0]. */
function bwrapVersion(bwrap: string): [number, number, number] {
  try {
    const text = execFileSync(bwrap, ['--version'], { encoding: 'utf8', timeout: 5_000 });
    const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
    if (match) return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
  } catch {
    // an old or odd bwrap: assume none of the newer options
  }
  return [0, 0, 0];
}
