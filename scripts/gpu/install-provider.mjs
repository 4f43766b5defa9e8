// Installs ONNX Runtime's CUDA execution provider from an npm tarball into onnxruntime-node's
// native folder (bin/napi-v*/linux/x64, beside libonnxruntime.so.1), where the core library
// looks for it. The logic of `pnpm gpu:setup` (scripts/gpu/setup.mjs), kept apart so that a
// test can run it on a small tarball of the same layout.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The registry package that ships the provider, the ONNX Runtime version it is built for
 * (onnxruntime-node must be the same version), the sha512 the registry publishes for its
 * tarball (`npm view <name>@<version> dist.integrity`), and the files taken from it.
 */
export const CUDA_PROVIDER = Object.freeze({
  name: 'com.github.asus4.onnxruntime.linux-x64-gpu',
  version: '0.4.9',
  ortVersion: '1.29.0',
  cuda: '13',
  integrity: 'sha512-FopIhNE/Ng+v2X65wVc9clPCBCvhvA53Hxo2U0Kf5fGdVsC7iCA+mZ0KLWggcQAj7TIZ6pNidR4AC10g74Xo6w==',
  folder: 'package/Plugins/Linux/x64',
  files: Object.freeze(['libonnxruntime_providers_cuda.so', 'libonnxruntime_providers_shared.so']),
});

/** The file beside the installed libraries that records what was installed. */
export const MARKER = '.agentflow-cuda-provider.json';

/** A setup failure with a message for the user; `exitCode` is what the CLI exits with. */
export function setupError(message, exitCode = 1) {
  return Object.assign(new Error(message), { name: 'GpuSetupError', exitCode });
}

/** Throws unless the machine is Linux x64, the only platform the provider is built for. */
export function assertLinuxX64(platform = process.platform, arch = process.arch) {
  if (platform !== 'linux' || arch !== 'x64') {
    throw setupError(
      `The CUDA provider of ${CUDA_PROVIDER.name}@${CUDA_PROVIDER.version} is built for linux-x64 only; this machine is ${platform}-${arch}. On other platforms AgentFlow runs on the CPU.`,
      4,
    );
  }
}

/** Reads onnxruntime-node's version and finds its bin/napi-v*\/linux/x64 folder (the one holding libonnxruntime.so.*). */
export function findOrtBinDirectory(ortPackageDir) {
  const manifest = join(ortPackageDir, 'package.json');
  if (!existsSync(manifest)) throw setupError(`No onnxruntime-node package at ${ortPackageDir} (no package.json): run \`pnpm install\` first.`);
  const { name, version } = JSON.parse(readFileSync(manifest, 'utf8'));
  if (name !== 'onnxruntime-node') throw setupError(`${manifest} is ${name}, not onnxruntime-node.`);
  const bin = join(ortPackageDir, 'bin');
  const folders = existsSync(bin) ? readdirSync(bin).filter((entry) => entry.startsWith('napi-v')) : [];
  for (const napi of folders.sort().reverse()) {
    const folder = join(bin, napi, 'linux', 'x64');
    if (existsSync(folder) && readdirSync(folder).some((file) => file.startsWith('libonnxruntime.so'))) return { binDir: folder, version };
  }
  throw setupError(`onnxruntime-node ${version} at ${ortPackageDir} has no bin/napi-v*/linux/x64/libonnxruntime.so.*: is it a complete install?`);
}

/**
 * Checks the platform and that onnxruntime-node at `ortPackageDir` is the version the
 * provider is built for; returns the folder the provider's files go to.
 */
export function findTarget({ ortPackageDir, provider = CUDA_PROVIDER, platform, arch }) {
  assertLinuxX64(platform, arch);
  const { binDir, version } = findOrtBinDirectory(ortPackageDir);
  if (version !== provider.ortVersion) {
    throw setupError(
      `onnxruntime-node ${version} is installed (${ortPackageDir}), but ${provider.name}@${provider.version} is built for ONNX Runtime ${provider.ortVersion}; the provider must match the core library. Pin onnxruntime-node to ${provider.ortVersion} (packages/tensor/package.json) and run \`pnpm install\`.`,
    );
  }
  return binDir;
}

/** The npm-style integrity string (`sha512-<base64>`) of a file. */
export async function fileIntegrity(path) {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return `sha512-${hash.digest('base64')}`;
}

const formatBytes = (bytes) => (bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`);
const sha256 = (buffer) => createHash('sha256').update(buffer).digest('hex');

/** What the marker in `binDir` records, or undefined when there is none or it cannot be read. */
export function readMarker(binDir) {
  try {
    return JSON.parse(readFileSync(join(binDir, MARKER), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Whether `binDir` already holds this provider: a marker for the same package, version and
 * integrity, and every file present with the recorded size and sha256.
 */
export function isInstalled(binDir, provider = CUDA_PROVIDER) {
  const marker = readMarker(binDir);
  if (marker === undefined || marker.package !== `${provider.name}@${provider.version}` || marker.integrity !== provider.integrity) return false;
  return provider.files.every((file) => {
    const path = join(binDir, file);
    const recorded = marker.files?.[file];
    return recorded !== undefined && existsSync(path) && statSync(path).size === recorded.size && sha256(readFileSync(path)) === recorded.sha256;
  });
}

/**
 * Installs the provider's files from `tarball` into onnxruntime-node's native folder.
 * Checks the tarball's sha512 against `provider.integrity`, onnxruntime-node's version
 * against `provider.ortVersion`, and that the CUDA library names that version. A second run
 * with the same provider changes nothing. Returns where the files went and whether it
 * installed them ('installed') or found them there ('already-installed').
 */
export async function installProvider({ tarball, ortPackageDir, provider = CUDA_PROVIDER, platform, arch, log = () => undefined }) {
  const binDir = findTarget({ ortPackageDir, provider, platform, arch });
  if (isInstalled(binDir, provider)) {
    log(`The CUDA provider of ${provider.name}@${provider.version} is already installed in ${binDir}: nothing to do.`);
    return { binDir, status: 'already-installed', files: provider.files.map((file) => join(binDir, file)) };
  }
  if (!existsSync(tarball)) throw setupError(`No tarball at ${tarball}.`);
  const integrity = await fileIntegrity(tarball);
  if (integrity !== provider.integrity) {
    throw setupError(`${tarball} has integrity ${integrity}, not the ${provider.integrity} the registry publishes for ${provider.name}@${provider.version}: a corrupt or different download. Delete it and run again.`);
  }
  log(`Tarball integrity ok (${integrity.slice(0, 24)}...).`);
  const scratch = mkdtempSync(join(binDir, '.gpu-setup-'));
  try {
    const members = provider.files.map((file) => `${provider.folder}/${file}`);
    try {
      execFileSync('tar', ['-xzf', tarball, '-C', scratch, ...members], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (error) {
      throw setupError(`${tarball} lacks ${members.join(' or ')}: ${String(error.stderr ?? error.message).trim()}`);
    }
    const files = {};
    for (const file of provider.files) {
      const bytes = readFileSync(join(scratch, provider.folder, file));
      if (file.includes('providers_cuda') && !bytes.includes(provider.ortVersion)) {
        throw setupError(`${file} in ${provider.name}@${provider.version} does not name ONNX Runtime ${provider.ortVersion}: it is built for another version.`);
      }
      files[file] = { size: bytes.length, sha256: sha256(bytes) };
    }
    // Copy under temporary names, then rename: a reader never sees half a library.
    for (const file of provider.files) {
      await copyFile(join(scratch, provider.folder, file), join(binDir, `${file}.partial`));
      renameSync(join(binDir, `${file}.partial`), join(binDir, file));
      log(`Installed ${join(binDir, file)} (${formatBytes(files[file].size)}).`);
    }
    const marker = { package: `${provider.name}@${provider.version}`, integrity: provider.integrity, ortVersion: provider.ortVersion, cuda: provider.cuda, files };
    writeFileSync(join(binDir, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { binDir, status: 'installed', files: provider.files.map((file) => join(binDir, file)) };
}

/** Removes the provider's files and the marker from onnxruntime-node's native folder; returns the paths removed. */
export function removeProvider({ ortPackageDir, provider = CUDA_PROVIDER }) {
  const { binDir } = findOrtBinDirectory(ortPackageDir);
  const removed = [...provider.files, MARKER].map((file) => join(binDir, file)).filter((path) => existsSync(path));
  for (const path of removed) rmSync(path);
  return removed;
}
