import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkCudaLibraries,
  cudaUnavailableReason,
  describeMissingCudaLibraries,
  explainCudaLoadError,
  findCudaProviderLibrary,
} from './cuda-provider';

const directory = mkdtempSync(join(tmpdir(), 'agentflow-cuda-libs-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function folderWith(name: string, libraries: string[]): string {
  const folder = join(directory, name);
  mkdirSync(folder, { recursive: true });
  for (const library of libraries) writeFileSync(join(folder, library), '');
  return folder;
}

const ldconfigWithDriver = [
  '3 libs found in cache `/etc/ld.so.cache\'',
  '\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1',
  '\tlibcurand.so.10 (libc6,x86-64) => /usr/local/cuda/lib64/libcurand.so.10',
  '\tlibcudart.so.13 (libc6) => /usr/lib32/libcudart.so.13',
].join('\n');

describe('checkCudaLibraries', () => {
  it('finds libraries through LD_LIBRARY_PATH and the ldconfig cache, and names the rest', () => {
    const onPath = folderWith('on-path', ['libcublas.so.13']);
    const wheel = folderWith('site-packages/nvidia/cu13/lib', ['libcudart.so.13', 'libcublasLt.so.13']);
    const report = checkCudaLibraries({
      env: { LD_LIBRARY_PATH: `/nonexistent:${onPath}` },
      ldconfig: () => ldconfigWithDriver,
      offPathDirectories: () => [folderWith('empty', []), wheel],
    });
    // The 32-bit cache entry of libcudart does not count on x64.
    expect(report).toEqual({
      missing: process.arch === 'x64' ? ['libcudart.so.13', 'libcublasLt.so.13'] : ['libcublasLt.so.13'],
      elsewhere: process.arch === 'x64' ? { 'libcudart.so.13': wheel, 'libcublasLt.so.13': wheel } : { 'libcublasLt.so.13': wheel },
      cacheRead: true,
    });
    const sentence = describeMissingCudaLibraries(report);
    expect(sentence).toContain('libcublasLt.so.13 (cuBLASLt 13)');
    expect(sentence).toContain(`start the process with LD_LIBRARY_PATH=${wheel}`);
  });

  it('says when the driver itself is missing and when the cache could not be read', () => {
    const report = checkCudaLibraries({ env: {}, ldconfig: () => undefined, offPathDirectories: () => [] });
    expect(report.cacheRead).toBe(false);
    expect(report.missing).toEqual(['libcuda.so.1', 'libcudart.so.13', 'libcublas.so.13', 'libcublasLt.so.13', 'libcurand.so.10']);
    const sentence = describeMissingCudaLibraries(report);
    expect(sentence).toMatch(/^the dynamic loader cannot find libcuda\.so\.1 \(the NVIDIA driver\), libcudart\.so\.13 \(CUDA 13 runtime\)/);
    expect(sentence).toContain('no ldconfig cache');
    expect(sentence).toContain('libcuda.so.1 comes with the NVIDIA driver');
    expect(describeMissingCudaLibraries({ missing: [], elsewhere: {}, cacheRead: true })).toBe('');
  });

  it('reads the library a dlopen error names', () => {
    const message =
      'Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.13: cannot open shared object file: No such file or directory';
    expect(explainCudaLoadError(message)).toContain('cannot find libcublasLt.so.13, cuBLASLt 13');
    expect(explainCudaLoadError('CUDA failure 100: no CUDA-capable device is detected')).toBe('');
    // What onnxruntime-node 1.29 actually throws when the provider's libraries are missing.
    const hint = explainCudaLoadError('OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library');
    expect(hint === '' || hint.startsWith(' (the dynamic loader cannot find ')).toBe(true);
  });

  it('points at pnpm gpu:setup when no provider is installed', () => {
    const reason = cudaUnavailableReason();
    if (findCudaProviderLibrary() === undefined) expect(reason).toContain('run `pnpm gpu:setup`');
    else expect(reason === undefined || reason.includes('the CUDA provider is installed')).toBe(true);
  });
});
