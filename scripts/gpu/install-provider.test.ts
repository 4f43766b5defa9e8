import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assertLinuxX64,
  CUDA_PROVIDER,
  fileIntegrity,
  findTarget,
  installProvider,
  isInstalled,
  MARKER,
  removeProvider,
} from './install-provider.mjs';

const directory = mkdtempSync(join(tmpdir(), 'agentflow-gpu-setup-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let count = 0;

/** A tarball laid out like the registry package, with small stand-ins for the libraries. */
function providerTarball(settings: { ortVersion?: string; omit?: string } = {}): string {
  const stage = join(directory, `stage-${++count}`);
  const folder = join(stage, CUDA_PROVIDER.folder);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(stage, 'package/package.json'), JSON.stringify({ name: CUDA_PROVIDER.name, version: CUDA_PROVIDER.version }));
  const contents: Record<string, string> = {
    libonnxruntime_providers_cuda: `\x7fELF cuda provider ORT ${settings.ortVersion ?? CUDA_PROVIDER.ortVersion} libcudart.so.13`,
    libonnxruntime_providers_shared: '\x7fELF shared provider',
    libonnxruntime_providers_tensorrt: '\x7fELF tensorrt (not installed)',
  };
  for (const [name, text] of Object.entries(contents)) {
    if (`${name}.so` !== settings.omit) writeFileSync(join(folder, `${name}.so`), text);
  }
  const tarball = join(directory, `provider-${count}.tgz`);
  execFileSync('tar', ['-czf', tarball, '-C', stage, 'package']);
  return tarball;
}

/** An onnxruntime-node package folder with its native folder, as pnpm installs it. */
function ortPackage(version = CUDA_PROVIDER.ortVersion): { ortPackageDir: string; binDir: string } {
  const ortPackageDir = join(directory, `onnxruntime-node-${++count}`);
  const binDir = join(ortPackageDir, 'bin/napi-v6/linux/x64');
  mkdirSync(binDir, { recursive: true });
  writeFileSync(join(ortPackageDir, 'package.json'), JSON.stringify({ name: 'onnxruntime-node', version }));
  writeFileSync(join(binDir, 'libonnxruntime.so.1'), 'core');
  return { ortPackageDir, binDir };
}

const linux = { platform: 'linux', arch: 'x64' };

async function providerFor(tarball: string) {
  return { ...CUDA_PROVIDER, integrity: await fileIntegrity(tarball) };
}

describe('installProvider', () => {
  it('puts the two libraries beside libonnxruntime.so.1, and a second run changes nothing', async () => {
    const tarball = providerTarball();
    const provider = await providerFor(tarball);
    const { ortPackageDir, binDir } = ortPackage();
    const lines: string[] = [];
    const first = await installProvider({ tarball, ortPackageDir, provider, ...linux, log: (line: string) => lines.push(line) });
    expect(first.status).toBe('installed');
    expect(readdirSync(binDir).sort()).toEqual([MARKER, 'libonnxruntime.so.1', ...CUDA_PROVIDER.files].sort());
    expect(readFileSync(join(binDir, 'libonnxruntime_providers_cuda.so'), 'utf8')).toContain('ORT 1.29.0');
    expect(lines.some((line) => line.startsWith(`Installed ${join(binDir, 'libonnxruntime_providers_cuda.so')}`))).toBe(true);
    expect(isInstalled(binDir, provider)).toBe(true);

    const before = statSync(join(binDir, 'libonnxruntime_providers_cuda.so')).mtimeMs;
    const second = await installProvider({ tarball: join(directory, 'not-needed.tgz'), ortPackageDir, provider, ...linux });
    expect(second.status).toBe('already-installed');
    expect(statSync(join(binDir, 'libonnxruntime_providers_cuda.so')).mtimeMs).toBe(before);

    // A damaged library is noticed and reinstalled.
    writeFileSync(join(binDir, 'libonnxruntime_providers_shared.so'), 'truncated');
    expect(isInstalled(binDir, provider)).toBe(false);
    expect((await installProvider({ tarball, ortPackageDir, provider, ...linux })).status).toBe('installed');

    expect(removeProvider({ ortPackageDir, provider }).length).toBe(3);
    expect(readdirSync(binDir)).toEqual(['libonnxruntime.so.1']);
  });

  it('refuses an onnxruntime-node of another version, naming both', async () => {
    const tarball = providerTarball();
    const { ortPackageDir } = ortPackage('1.30.0');
    await expect(installProvider({ tarball, ortPackageDir, provider: await providerFor(tarball), ...linux })).rejects.toThrow(
      /onnxruntime-node 1\.30\.0 is installed .* built for ONNX Runtime 1\.29\.0; the provider must match/,
    );
  });

  it('refuses a tarball whose integrity differs from the registry', async () => {
    const tarball = providerTarball();
    const { ortPackageDir, binDir } = ortPackage();
    await expect(installProvider({ tarball, ortPackageDir, ...linux })).rejects.toThrow(
      new RegExp(`has integrity sha512-.*, not the ${CUDA_PROVIDER.integrity.slice(0, 20).replace(/[+/]/g, '.')}`),
    );
    expect(readdirSync(binDir)).toEqual(['libonnxruntime.so.1']);
  });

  it('names a library missing from the tarball, and a provider built for another version', async () => {
    const missing = providerTarball({ omit: 'libonnxruntime_providers_shared.so' });
    const { ortPackageDir, binDir } = ortPackage();
    await expect(installProvider({ tarball: missing, ortPackageDir, provider: await providerFor(missing), ...linux })).rejects.toThrow(
      /lacks package\/Plugins\/Linux\/x64\/libonnxruntime_providers_cuda\.so or .*libonnxruntime_providers_shared\.so/,
    );
    const older = providerTarball({ ortVersion: '1.22.0' });
    await expect(installProvider({ tarball: older, ortPackageDir, provider: await providerFor(older), ...linux })).rejects.toThrow(
      /does not name ONNX Runtime 1\.29\.0/,
    );
    expect(readdirSync(binDir)).toEqual(['libonnxruntime.so.1']);
  });

  it('refuses other platforms and incomplete onnxruntime-node folders', () => {
    expect(() => assertLinuxX64('darwin', 'arm64')).toThrow(/built for linux-x64 only; this machine is darwin-arm64/);
    expect(() => assertLinuxX64('linux', 'arm64')).toThrow(expect.objectContaining({ exitCode: 4 }));
    const { ortPackageDir, binDir } = ortPackage();
    rmSync(join(binDir, 'libonnxruntime.so.1'));
    expect(() => findTarget({ ortPackageDir, ...linux })).toThrow(/has no bin\/napi-v\*\/linux\/x64\/libonnxruntime\.so/);
    expect(() => findTarget({ ortPackageDir: join(directory, 'nothing'), ...linux })).toThrow(/run `pnpm install` first/);
  });
});
