// The PyTorch side of the benchmarks that compare against it (pytorch-compare.mjs,
// generation-compare.mjs): which python, which BLAS, which of the BLAS's kernels, how many threads.
//
// Debian's torch calls whichever libblas.so.3 is installed. The OpenMP build of OpenBLAS shares
// torch's OpenMP threads (as MKL does in PyTorch's wheels); the pthread build adds a second pool of
// threads that competes with torch's own on a 2-core machine, so the OpenMP build is preferred.
//
// OpenBLAS picks its kernels from the CPU's model number, and a virtual machine that reports a
// generic model ("Intel(R) Xeon(R) Processor") can leave it on its oldest kernels: on the
// Sapphire Rapids VM of 2026-12-04 OpenBLAS 0.3.21 chose Prescott (SSE3) and multiplied
// [1024, 1536] x [1536, 512] at 31 GFLOP/s on 2 threads, against 190-220 with its SkylakeX
// kernels. A comparison against that PyTorch says nothing about AgentFlow, so by default
// (`--blas-core auto`) the kernels are set to the best the CPU's instruction set allows whenever
// OpenBLAS chose weaker ones, and the report says so.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const OPENMP_BLAS = '/usr/lib/x86_64-linux-gnu/openblas-openmp';

// What torch maps (pytorch_qwen3.py's blas_library) and which kernels OpenBLAS chose
// (openblas_get_corename; null for another BLAS).
const PROBE = `
import ctypes, json, sys, torch
sys.path.insert(0, ${JSON.stringify(dirname(fileURLToPath(import.meta.url)))})
from pytorch_qwen3 import blas_library
path = blas_library()
core = None
if path:
    try:
        corename = ctypes.CDLL(path).openblas_get_corename
        corename.restype = ctypes.c_char_p
        core = corename().decode()
    except (OSError, AttributeError):
        pass
print(json.dumps({"version": torch.__version__, "blas": path, "core": core}))
`;

/** 3 AVX-512, 2 AVX2 and FMA, 1 AVX, 0 older: of an OpenBLAS kernel family, by name. */
export function kernelLevel(core) {
  const name = (core ?? '').toLowerCase();
  if (['skylakex', 'cooperlake', 'sapphirerapids'].includes(name)) return 3;
  if (['haswell', 'zen'].includes(name)) return 2;
  if (['sandybridge', 'bulldozer', 'piledriver', 'steamroller', 'excavator'].includes(name)) return 1;
  return 0;
}

/** The same scale for a CPU's flags (as /proc/cpuinfo lists them). */
export function cpuLevel(flags) {
  const has = (flag) => flags.includes(flag);
  if (['avx512f', 'avx512bw', 'avx512dq', 'avx512vl'].every(has)) return 3;
  if (has('avx2') && has('fma')) return 2;
  if (has('avx')) return 1;
  return 0;
}

const KERNELS_FOR_LEVEL = [undefined, 'Sandybridge', 'Haswell', 'SkylakeX'];

function cpuFlags() {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((text) => text.startsWith('flags'));
    return line ? line.split(':')[1].trim().split(/\s+/) : [];
  } catch {
    return [];
  }
}

/**
 * Finds torch under `python` and sets up its environment: `threads` OpenMP/OpenBLAS/MKL threads,
 * the OpenMP OpenBLAS first on LD_LIBRARY_PATH (or `blasDir`), and OpenBLAS's kernels per
 * `blasCore`: 'auto' (the best the CPU allows when OpenBLAS chose weaker ones), 'detected'
 * (OpenBLAS's own choice) or a kernel name for OPENBLAS_CORETYPE. `extra` is added to the
 * environment. Returns { ok: false, environment, reason } without torch, else { ok: true, version,
 * environment, blas, core, description }.
 */
export function torchSide({ python, threads, blasDir, blasCore = 'auto', extra = {} }) {
  const blasPath = blasDir ?? (existsSync(OPENMP_BLAS) ? OPENMP_BLAS : undefined);
  const environment = {
    ...process.env,
    OMP_NUM_THREADS: String(threads),
    OPENBLAS_NUM_THREADS: String(threads),
    MKL_NUM_THREADS: String(threads),
    ...extra,
    ...(blasPath ? { LD_LIBRARY_PATH: [blasPath, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } : {}),
  };
  const probeWith = (env) => spawnSync(python, ['-c', PROBE], { encoding: 'utf8', env });
  if (blasCore !== 'auto' && blasCore !== 'detected') environment.OPENBLAS_CORETYPE = blasCore;
  else delete environment.OPENBLAS_CORETYPE;
  const first = probeWith(environment);
  if (first.error) return { ok: false, environment, reason: `${python} cannot be run (${first.error.message})` };
  if (first.status !== 0) {
    return { ok: false, environment, reason: `${python} has no torch (${first.stderr.trim().split('\n').pop()}); install it with \`apt-get install -y python3-torch\`` };
  }
  const found = JSON.parse(first.stdout);
  let core = found.core;
  let description = core ? `OpenBLAS's ${core} kernels` : 'not OpenBLAS';
  if (blasCore === 'auto' && core) {
    const wanted = KERNELS_FOR_LEVEL[cpuLevel(cpuFlags())];
    if (wanted && kernelLevel(core) < kernelLevel(wanted)) {
      environment.OPENBLAS_CORETYPE = wanted;
      const second = probeWith(environment);
      core = second.status === 0 ? JSON.parse(second.stdout).core : core;
      description = `OpenBLAS's ${core} kernels (OPENBLAS_CORETYPE=${wanted}: on this CPU OpenBLAS itself chose ${found.core}, weaker than its instruction set allows; --blas-core detected keeps that)`;
    }
  } else if (environment.OPENBLAS_CORETYPE) {
    description = `OpenBLAS's ${core} kernels (OPENBLAS_CORETYPE=${blasCore})`;
  }
  return { ok: true, version: found.version, environment, blas: found.blas, core, description };
}
