import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

/**
 * Where onnxruntime-node keeps the CUDA provider library, or undefined when it is not
 * installed (the CPU-only install; `pnpm gpu:setup` installs it). Checking first spares a
 * doomed session attempt whose native error ONNX Runtime prints to stderr on its own.
 */
export function findCudaProviderLibrary(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const root = join(dirname(require.resolve('onnxruntime-node')), '..', 'bin');
    for (const napi of readdirSync(root)) {
      const candidate = join(root, napi, process.platform, process.arch, 'libonnxruntime_providers_cuda.so');
      if (existsSync(candidate)) return candidate;
    }
  } catch {
    // An unexpected layout: let the session attempt decide.
    return 'unknown';
  }
  return undefined;
}

/**
 * The shared libraries the CUDA provider that `pnpm gpu:setup` installs (ONNX Runtime
 * 1.29.0 built for CUDA 13) links against, beyond the C runtime, with what each one is.
 */
export const CUDA_PROVIDER_DEPENDENCIES: Readonly<Record<string, string>> = {
  'libcuda.so.1': 'the NVIDIA driver',
  'libcudart.so.13': 'CUDA 13 runtime',
  'libcublas.so.13': 'cuBLAS 13',
  'libcublasLt.so.13': 'cuBLASLt 13',
  'libcurand.so.10': 'cuRAND of CUDA 13',
};

/** What {@link checkCudaLibraries} found. */
export interface CudaLibraryReport {
  /** Libraries the dynamic loader will not find (LD_LIBRARY_PATH, `ldconfig -p`, /lib, /usr/lib). */
  missing: string[];
  /** For missing libraries found in a folder off the loader's path: that folder (add it to LD_LIBRARY_PATH). */
  elsewhere: Record<string, string>;
  /** False when `ldconfig -p` could not be read: `missing` then only reflects LD_LIBRARY_PATH and the default folders. */
  cacheRead: boolean;
}

/** Settings for {@link checkCudaLibraries}; the defaults read this process and machine. */
export interface CudaLibraryCheckSettings {
  /** Default: {@link CUDA_PROVIDER_DEPENDENCIES}' names. */
  libraries?: readonly string[];
  /** Default: `process.env` (only LD_LIBRARY_PATH is read). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The output of `ldconfig -p`, or undefined when unreadable. Default: runs ldconfig. */
  ldconfig?: () => string | undefined;
  /** Folders off the loader's path to look in for hints. Default: CUDA toolkits and pip's nvidia wheels. */
  offPathDirectories?: () => readonly string[];
}

const defaultDirectories = ['/lib64', '/usr/lib64', '/lib', '/usr/lib', '/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu'];

function readLdconfig(): string | undefined {
  for (const command of ['/sbin/ldconfig', '/usr/sbin/ldconfig', 'ldconfig']) {
    try {
      return execFileSync(command, ['-p'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
    } catch {
      // Try the next place ldconfig lives.
    }
  }
  return undefined;
}

function subfolders(directory: string): string[] {
  try {
    return readdirSync(directory, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
      .map((entry) => join(directory, entry.name));
  } catch {
    return [];
  }
}

/** CUDA toolkit folders and the lib folders of pip's nvidia-* wheels (as PyTorch images ship CUDA). */
function offPathCudaDirectories(): string[] {
  const found = ['/usr/local/cuda/lib64', '/usr/local/cuda/lib', '/usr/local/cuda/targets/x86_64-linux/lib', '/usr/local/nvidia/lib64', '/usr/local/nvidia/lib'];
  for (const toolkit of subfolders('/usr/local').filter((path) => /\/cuda-\d/.test(path))) {
    found.push(join(toolkit, 'lib64'), join(toolkit, 'lib'), join(toolkit, 'targets/x86_64-linux/lib'));
  }
  const libRoots = ['/usr/lib', '/usr/local/lib', join(homedir(), '.local/lib'), ...subfolders('/opt').map((path) => join(path, '.venv/lib'))];
  for (const root of libRoots) {
    for (const python of subfolders(root).filter((path) => /python3[.\d]*$/.test(path))) {
      for (const packages of ['site-packages', 'dist-packages']) {
        for (const wheel of subfolders(join(python, packages, 'nvidia'))) found.push(join(wheel, 'lib'));
      }
    }
  }
  return found;
}

/**
 * Checks whether the dynamic loader will find the CUDA libraries the CUDA provider needs,
 * the way it searches for a dlopen'd library's dependencies: LD_LIBRARY_PATH, the ldconfig
 * cache, then /lib and /usr/lib. For each library it cannot find, it looks in CUDA
 * toolkit folders and pip's nvidia wheels, and names the folder to add to LD_LIBRARY_PATH.
 */
export function checkCudaLibraries(settings: CudaLibraryCheckSettings = {}): CudaLibraryReport {
  const libraries = settings.libraries ?? Object.keys(CUDA_PROVIDER_DEPENDENCIES);
  const env = settings.env ?? process.env;
  const cache = (settings.ldconfig ?? readLdconfig)();
  const cached = new Set<string>();
  for (const line of cache?.split('\n') ?? []) {
    const match = /^\s*(\S+)\s+\(([^)]*)\)/.exec(line);
    if (match !== null && (process.arch !== 'x64' || match[2]!.includes('x86-64'))) cached.add(match[1]!);
  }
  const searchPath = [...(env.LD_LIBRARY_PATH ?? '').split(delimiter).filter(Boolean), ...defaultDirectories];
  const missing = libraries.filter((library) => !cached.has(library) && !searchPath.some((folder) => existsSync(join(folder, library))));
  const elsewhere: Record<string, string> = {};
  if (missing.length > 0) {
    const folders = (settings.offPathDirectories ?? offPathCudaDirectories)();
    for (const library of missing) {
      const folder = folders.find((candidate) => existsSync(join(candidate, library)));
      if (folder !== undefined) elsewhere[library] = folder;
    }
  }
  return { missing, elsewhere, cacheRead: cache !== undefined };
}

/**
 * One sentence naming each missing library and what it is, and, where they were found off
 * the loader's path, the LD_LIBRARY_PATH that finds them. Empty when nothing is missing.
 */
export function describeMissingCudaLibraries(report: CudaLibraryReport): string {
  if (report.missing.length === 0) return '';
  const names = report.missing.map((library) => `${library} (${CUDA_PROVIDER_DEPENDENCIES[library] ?? 'CUDA'})`);
  let sentence = `the dynamic loader cannot find ${names.join(', ')} (searched LD_LIBRARY_PATH, ${report.cacheRead ? 'ldconfig -p' : 'no ldconfig cache'}, /lib, /usr/lib)`;
  const folders = [...new Set(Object.values(report.elsewhere))];
  if (folders.length > 0) {
    const found = Object.keys(report.elsewhere).join(', ');
    sentence += `; ${found} ${Object.keys(report.elsewhere).length === 1 ? 'is' : 'are'} in ${folders.join(', ')}: start the process with LD_LIBRARY_PATH=${folders.join(delimiter)}`;
  }
  const unfound = report.missing.filter((library) => report.elsewhere[library] === undefined);
  if (unfound.length > 0) {
    sentence += unfound.includes('libcuda.so.1')
      ? '; libcuda.so.1 comes with the NVIDIA driver (is there a GPU?)'
      : '; install CUDA 13 (cudart, cuBLAS, cuRAND) or its pip wheels';
  }
  return `${sentence}.`;
}

let memo: CudaLibraryReport | undefined;

/** {@link checkCudaLibraries} with the defaults, once per process (the loader's path cannot change after start). */
export function checkCudaLibrariesOnce(): CudaLibraryReport {
  memo ??= checkCudaLibraries();
  return memo;
}

/**
 * Why a CUDA session cannot start on this machine, as the end of a sentence, or undefined
 * when nothing is known to be missing (then ONNX Runtime's own attempt decides): no CUDA
 * provider installed, or CUDA libraries that the dynamic loader will not find.
 */
export function cudaUnavailableReason(): string | undefined {
  const provider = findCudaProviderLibrary();
  if (provider === undefined) {
    return 'onnxruntime-node has no CUDA provider library installed (run `pnpm gpu:setup` on a Linux x64 machine, then `pnpm gpu:check`).';
  }
  if (provider === 'unknown') return undefined;
  const report = checkCudaLibrariesOnce();
  // Without the ldconfig cache a library may still be found there: let ONNX Runtime try.
  if (report.missing.length === 0 || !report.cacheRead) return undefined;
  return `the CUDA provider is installed (${provider}), but ${describeMissingCudaLibraries(report)}`;
}

/**
 * A hint for ONNX Runtime's CUDA failure message, or ''. Its message says only "Failed to load
 * shared library" (the dlopen error goes to stderr), so the hint names the CUDA libraries the
 * loader cannot find, or the library a dlopen error names when the message carries one.
 */
export function explainCudaLoadError(message: string): string {
  const library = /([\w.+-]+\.so[.\d]*): cannot open shared object file/.exec(message)?.[1];
  if (library !== undefined) {
    const what = CUDA_PROVIDER_DEPENDENCIES[library];
    return ` (the dynamic loader cannot find ${library}${what === undefined ? '' : `, ${what}`}; \`pnpm gpu:check\` lists every missing CUDA library)`;
  }
  if (!/failed to load shared library/i.test(message)) return '';
  const missing = describeMissingCudaLibraries(checkCudaLibrariesOnce());
  return missing === '' ? '' : ` (${missing.slice(0, -1)})`;
}
