import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Where onnxruntime-node keeps the CUDA provider library, or undefined when it is not
 * installed (the CPU-only install). Checking first spares a doomed session attempt whose
 * native error ONNX Runtime prints to stderr on its own.
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
