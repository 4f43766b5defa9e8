// `pnpm gpu:setup`: installs ONNX Runtime's CUDA execution provider from the npm registry
// alone (no download host of onnxruntime-node's own). Usage:
//   pnpm gpu:setup                  fetch com.github.asus4.onnxruntime.linux-x64-gpu with npm pack, check, install
//   pnpm gpu:setup --tarball FILE   install from a tarball fetched elsewhere (a machine without the registry)
//   pnpm gpu:setup --status         say whether it is installed (exit 0) or not (exit 3)
//   pnpm gpu:setup --remove         remove it again (CPU-only install)
// Exit codes: 0 done, 1 failed, 2 bad arguments, 3 not installed (--status), 4 not linux-x64.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CUDA_PROVIDER, findTarget, installProvider, isInstalled, removeProvider, setupError } from './install-provider.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const spec = `${CUDA_PROVIDER.name}@${CUDA_PROVIDER.version}`;

function parseArguments(argv) {
  const settings = { tarball: undefined, status: false, remove: false };
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i];
    if (argument === '--tarball' && argv[i + 1] !== undefined) settings.tarball = resolve(argv[++i]);
    else if (argument === '--status') settings.status = true;
    else if (argument === '--remove') settings.remove = true;
    else throw setupError(`Unknown argument ${JSON.stringify(argument)}: expected --tarball FILE, --status or --remove.`, 2);
  }
  return settings;
}

function ortPackageDirectory() {
  const require = createRequire(join(root, 'packages/tensor/package.json'));
  try {
    return realpathSync(dirname(require.resolve('onnxruntime-node/package.json')));
  } catch {
    throw setupError('onnxruntime-node is not installed for packages/tensor: run `pnpm install` (or `pnpm setup`) first.');
  }
}

function npm(args) {
  return execFileSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Fetches the provider's tarball with `npm pack` into a fresh folder, after checking the registry's integrity against ours. */
function fetchTarball(folder) {
  let published;
  try {
    published = npm(['view', spec, 'dist.integrity']);
  } catch (error) {
    throw setupError(
      `Cannot reach the npm registry for ${spec} (${String(error.stderr ?? error.message).trim().split('\n')[0]}). On a machine without it, fetch the tarball elsewhere with \`npm pack ${spec}\` and run \`pnpm gpu:setup --tarball <file>\`.`,
    );
  }
  if (published !== CUDA_PROVIDER.integrity) {
    throw setupError(`The registry publishes integrity ${published} for ${spec}, not the ${CUDA_PROVIDER.integrity} scripts/gpu/install-provider.mjs expects: refusing to install a changed package.`);
  }
  console.log(`Fetching ${spec} from the npm registry (about 180 MB)...`);
  const started = performance.now();
  const [packed] = JSON.parse(npm(['pack', spec, '--pack-destination', folder, '--json']));
  const tarball = join(folder, packed.filename);
  const seconds = (performance.now() - started) / 1000;
  console.log(`Fetched ${(statSync(tarball).size / 1e6).toFixed(1)} MB in ${seconds.toFixed(1)} s.`);
  return tarball;
}

/** Prints whether this machine's dynamic loader finds the CUDA 13 libraries, when the tensor package is built. */
async function reportCudaLibraries() {
  const entry = join(root, 'packages/tensor/dist/index.js');
  if (!existsSync(entry)) {
    console.log('Run `pnpm gpu:check` (after `pnpm build`) to check the GPU, the CUDA 13 libraries and the outputs.');
    return;
  }
  const { checkCudaLibraries, describeMissingCudaLibraries } = await import(entry);
  if (typeof checkCudaLibraries !== 'function') {
    console.log('Run `pnpm gpu:check` (after `pnpm build`: packages/tensor/dist is older than its sources) to check the GPU and the CUDA 13 libraries.');
    return;
  }
  const report = checkCudaLibraries();
  console.log(
    report.missing.length === 0
      ? 'The dynamic loader finds the CUDA 13 libraries the provider needs. Next: `pnpm gpu:check`.'
      : `Note: ${describeMissingCudaLibraries(report)} CUDA sessions will fall back to the CPU until they are found. \`pnpm gpu:check\` says the same.`,
  );
}

async function main() {
  const settings = parseArguments(process.argv.slice(2));
  const ortPackageDir = ortPackageDirectory();
  if (settings.remove) {
    const removed = removeProvider({ ortPackageDir });
    console.log(removed.length === 0 ? 'No CUDA provider was installed: nothing to remove.' : `Removed ${removed.join(', ')}.`);
    return;
  }
  const binDir = findTarget({ ortPackageDir });
  if (settings.status) {
    const installed = isInstalled(binDir);
    console.log(installed ? `The CUDA provider of ${spec} is installed in ${binDir}.` : `No CUDA provider of ${spec} in ${binDir}: run \`pnpm gpu:setup\`.`);
    process.exitCode = installed ? 0 : 3;
    return;
  }
  const started = performance.now();
  if (isInstalled(binDir)) {
    console.log(`The CUDA provider of ${spec} is already installed in ${binDir}: nothing to do.`);
  } else {
    const scratch = settings.tarball === undefined ? mkdtempSync(join(tmpdir(), 'agentflow-gpu-setup-')) : undefined;
    try {
      const tarball = settings.tarball ?? fetchTarball(scratch);
      await installProvider({ tarball, ortPackageDir, log: (line) => console.log(line) });
    } finally {
      if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
    }
    console.log(`CUDA provider for ONNX Runtime ${CUDA_PROVIDER.ortVersion} (CUDA ${CUDA_PROVIDER.cuda}) installed in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
  }
  await reportCudaLibraries();
}

main().catch((error) => {
  console.error(`gpu:setup: ${error.message}`);
  process.exitCode = error.exitCode ?? 1;
});
