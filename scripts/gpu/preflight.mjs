// What `pnpm gpu:check` needs before it starts a CUDA session: an NVIDIA driver (nvidia-smi),
// the CUDA provider (`pnpm gpu:setup`) and the CUDA 13 libraries it links, found by the dynamic
// loader or in a folder that LD_LIBRARY_PATH can add (CUDA toolkits, pip's nvidia wheels).
import { execFileSync } from 'node:child_process';
import { delimiter } from 'node:path';

/** cuDNN is loaded at run time by some kernels (convolutions), not by the LLM graphs: a warning only. */
const OPTIONAL_LIBRARIES = { 'libcudnn.so.9': 'cuDNN 9, loaded at run time by some kernels' };

/** Name, memory and driver of each GPU nvidia-smi lists, or the reason there is none. */
export function queryGpus() {
  try {
    const text = execFileSync('nvidia-smi', ['--query-gpu=name,memory.total,driver_version', '--format=csv,noheader,nounits'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 20_000,
    });
    const gpus = text
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [name, memoryMiB, driver] = line.split(',').map((field) => field.trim());
        return { name, memoryMiB: Number(memoryMiB), driver };
      });
    return gpus.length > 0 ? { gpus } : { problem: 'nvidia-smi lists no GPU' };
  } catch (error) {
    if (error.code === 'ENOENT') return { problem: 'no NVIDIA driver: nvidia-smi is not on the PATH' };
    return { problem: `nvidia-smi failed: ${String(error.stderr || error.message).trim().split('\n')[0]}` };
  }
}

/**
 * Runs the three checks with the tensor package's helpers (`tensor` is its dist module).
 * Returns each check's line, the problems that stop the run, and the LD_LIBRARY_PATH that
 * the worker processes need (the current one plus folders where missing libraries are).
 */
export function preflight(tensor, env = process.env) {
  const lines = [];
  const problems = [];
  const gpu = queryGpus();
  if (gpu.problem) problems.push(gpu.problem);
  lines.push(gpu.problem ? `GPU: ${gpu.problem}` : `GPU: ${gpu.gpus.map((g) => `${g.name} (${g.memoryMiB} MiB, driver ${g.driver})`).join('; ')}`);

  const provider = tensor.findCudaProviderLibrary();
  if (provider === undefined) problems.push('no CUDA provider installed (run `pnpm gpu:setup`)');
  lines.push(`CUDA provider: ${provider ?? 'not installed (run `pnpm gpu:setup`)'}`);

  const report = tensor.checkCudaLibraries({ env });
  const optional = tensor.checkCudaLibraries({ env, libraries: Object.keys(OPTIONAL_LIBRARIES) });
  const elsewhere = { ...report.elsewhere, ...optional.elsewhere };
  const addable = [...new Set(Object.values(elsewhere))];
  const required = report.missing.filter((library) => report.elsewhere[library] === undefined);
  if (required.length > 0) {
    const named = required.map((library) => `${library} (${tensor.CUDA_PROVIDER_DEPENDENCIES[library]})`).join(', ');
    problems.push(`missing CUDA 13 libraries: ${named}`);
  }
  lines.push(
    report.missing.length === 0
      ? 'CUDA libraries: all found by the dynamic loader'
      : `CUDA libraries: ${tensor.describeMissingCudaLibraries(report)}${addable.length > 0 ? ' gpu:check adds those folders to LD_LIBRARY_PATH for its workers.' : ''}`,
  );
  for (const library of optional.missing) {
    const where = optional.elsewhere[library] === undefined ? 'not found (a warning only)' : `in ${optional.elsewhere[library]}, added to LD_LIBRARY_PATH`;
    lines.push(`Optional: ${library} (${OPTIONAL_LIBRARIES[library]}): ${where}`);
  }
  const ldLibraryPath = [...addable, ...(env.LD_LIBRARY_PATH ?? '').split(delimiter).filter(Boolean)].join(delimiter);
  return { lines, problems, ldLibraryPath, gpus: gpu.gpus ?? [], provider, libraries: { ...report, optional } };
}
