#!/usr/bin/env node
// The consumer's view of the packages: packs every package with `pnpm pack`, checks each
// tarball (LICENSE, README, no workspace: ranges, engines, publint, attw), installs each
// package alone into a fresh npm project from the tarballs (other AgentFlow packages come
// from the tarballs too, never the registry), checks which AgentFlow packages it brought
// and its installed size against the budgets of scripts/pack-check/consumers.mjs, imports
// its entry points as ESM and type-checks a file against its types (node16 and bundler
// resolution, skipLibCheck off); then installs, type-checks and runs each project of
// examples/ against the tarballs and compares what it prints with its README.
// Needs `pnpm build` first. Run by .ci/run. Usage:
//   node scripts/pack-check.mjs [--only core,dapo] [--no-examples] [--no-lint] [--jobs N] [--keep]
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { CONSUMERS, TYPED_USES } from './pack-check/consumers.mjs';
import { checkExample } from './pack-check/examples.mjs';
import { agentflowPackages, installedMb, mapLimited, npmInstall, runIn, writeProjectManifest } from './pack-check/npm-project.mjs';

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: options } = parseArgs({
  options: {
    only: { type: 'string' },
    'no-examples': { type: 'boolean', default: false },
    'no-lint': { type: 'boolean', default: false },
    jobs: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
  },
});
const started = performance.now();
const failures = [];
const fail = (message) => {
  failures.push(message);
  console.error(`  FAIL ${message}`);
};
const seconds = (since) => ((performance.now() - since) / 1000).toFixed(1);
const bin = (name) => join(root, 'node_modules', '.bin', name);

const packages = readdirSync(join(root, 'packages'))
  .filter((name) => existsSync(join(root, 'packages', name, 'package.json')))
  .map((name) => ({ name, dir: join(root, 'packages', name), manifest: JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) }))
  .filter((pkg) => pkg.manifest.private !== true);
for (const pkg of packages) {
  if (!existsSync(join(pkg.dir, 'dist', 'index.js'))) {
    console.error(`${pkg.manifest.name} has no dist/index.js: run \`pnpm build\` first.`);
    process.exit(1);
  }
}

const work = mkdtempSync(join(tmpdir(), 'agentflow-pack-check-'));
const tarballDir = join(work, 'tarballs');
mkdirSync(tarballDir);
console.log(`[pack] ${packages.length} packages into ${tarballDir}`);
const tarballs = new Map();
for (const pkg of packages) {
  await runIn(pkg.dir, 'pnpm', ['pack', '--pack-destination', tarballDir]);
  const file = join(tarballDir, `${pkg.manifest.name.replace('@', '').replace('/', '-')}-${pkg.manifest.version}.tgz`);
  if (!existsSync(file)) throw new Error(`pnpm pack did not write ${file}`);
  tarballs.set(pkg.manifest.name, file);
}

console.log('[tarballs] contents, manifest, publint, attw');
await mapLimited(packages, 2, async (pkg) => {
  const file = tarballs.get(pkg.manifest.name);
  const { stdout: listing } = await run('tar', ['-tzf', file]);
  for (const required of ['package/LICENSE', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts']) {
    if (!listing.split('\n').includes(required)) fail(`${pkg.manifest.name}: the tarball has no ${required.slice(8)}`);
  }
  const { stdout: packed } = await run('tar', ['-xzf', file, '-O', 'package/package.json']);
  const manifest = JSON.parse(packed);
  if (packed.includes('workspace:')) fail(`${pkg.manifest.name}: the packed package.json still has a workspace: range`);
  if (!manifest.engines?.node) fail(`${pkg.manifest.name}: no engines.node`);
  if (!manifest.license) fail(`${pkg.manifest.name}: no license`);
  if (manifest.repository && /example\.invalid/.test(JSON.stringify(manifest.repository))) fail(`${pkg.manifest.name}: placeholder repository`);
  if (options['no-lint']) return;
  for (const [tool, args] of [
    ['publint', ['run', file, '--strict']],
    ['attw', [file, '--profile', 'esm-only', '--format', 'ascii', '--no-color']],
  ]) {
    await runIn(tarballDir, bin(tool), args).catch((error) => fail(`${pkg.manifest.name}: ${tool} reported problems\n${error.message}`));
  }
});

const only = options.only?.split(',');
const consumers = CONSUMERS.filter((consumer) => !only || consumer.install.some((name) => only.includes(name)));
const typeRoots = join(root, 'node_modules', '@types');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
console.log(`[consumers] ${consumers.length} projects, ${options.jobs} at a time`);
const rows = await mapLimited(consumers, Number(options.jobs), async (consumer) => {
  const label = consumer.install.map((name) => `@agentflow/${name}`).join(' + ');
  const dir = join(work, 'consumers', consumer.install.join('+'));
  mkdirSync(dir, { recursive: true });
  const dependencies = Object.fromEntries(consumer.install.map((name) => [`@agentflow/${name}`, 'tarball']));
  writeProjectManifest(dir, { name: `consumer-${consumer.install.join('-')}`, dependencies, tarballs });
  let installSeconds;
  try {
    installSeconds = await npmInstall(dir);
  } catch (error) {
    fail(`${label}: npm install failed\n${error.message}`);
    return { label, consumer };
  }
  const brought = agentflowPackages(dir);
  const megabytes = await installedMb(dir);
  if (brought.join(',') !== [...consumer.brings].sort().join(',')) {
    fail(`${label}: brought ${brought.join(', ')}; expected exactly ${[...consumer.brings].sort().join(', ')}`);
  }
  if (megabytes > consumer.maxMb) fail(`${label}: node_modules is ${megabytes.toFixed(1)} MB, over its budget of ${consumer.maxMb} MB`);
  const entries = consumer.imports ?? consumer.install.slice(0, 1).map((name) => `@agentflow/${name}`);
  const files = [];
  for (const [index, entry] of entries.entries()) {
    const script = `const m = await import(${JSON.stringify(entry)}); const n = Object.keys(m).length; if (n === 0) throw new Error('no exports'); console.log(n);`;
    const exported = await runIn(dir, process.execPath, ['--input-type=module', '-e', script]).catch((error) => {
      fail(`${label}: import ${entry} failed\n${error.message}`);
      return '?';
    });
    console.log(`  ${entry}: ${exported.trim()} exports`);
    writeFileSync(join(dir, `namespace-${index}.ts`), `import * as api from '${entry}';\nexport const names: string[] = Object.keys(api);\n`);
    files.push(`namespace-${index}.ts`);
    if (TYPED_USES[entry]) {
      writeFileSync(join(dir, `typed-${index}.ts`), `${TYPED_USES[entry]}\n`);
      files.push(`typed-${index}.ts`);
    }
  }
  for (const [module, resolution] of [['node16', 'node16'], ['esnext', 'bundler']]) {
    const args = [tsc, '--noEmit', '--strict', '--skipLibCheck', 'false', '--target', 'es2022', '--module', module];
    args.push('--moduleResolution', resolution, '--types', 'node', '--typeRoots', typeRoots, ...files);
    await runIn(dir, process.execPath, args).catch((error) => fail(`${label}: tsc (${resolution}) failed\n${error.message}`));
  }
  console.log(`  ${label}: ${megabytes.toFixed(1)} MB (budget ${consumer.maxMb}), brought ${brought.join(', ')}, install ${installSeconds.toFixed(1)} s`);
  return { label, consumer, megabytes, brought, installSeconds };
});

if (!options['no-examples'] && !only) {
  const examplesDir = join(root, 'examples');
  const examples = readdirSync(examplesDir).filter((name) => existsSync(join(examplesDir, name, 'package.json')));
  console.log(`[examples] ${examples.join(', ')}`);
  await mapLimited(examples, 2, async (name) => {
    const dir = join(work, 'examples', name);
    cpSync(join(examplesDir, name), dir, { recursive: true, filter: (path) => !/[\\/](node_modules|dist)$/.test(path) });
    const result = await checkExample({ name, dir, tarballs, tsc, typeRoots }).catch((error) => ({ error }));
    if (result.error) fail(`examples/${name}: ${result.error.message}`);
    else console.log(`  examples/${name}: printed what its README says (${result.lines} lines), install ${result.installSeconds.toFixed(1)} s, run ${result.runSeconds.toFixed(1)} s`);
  });
}

console.log('\n| package installed alone | node_modules (MB) | budget (MB) | AgentFlow packages it brings |');
console.log('| --- | ---: | ---: | --- |');
for (const row of rows) {
  if (row.megabytes === undefined) continue;
  console.log(`| ${row.label} | ${row.megabytes.toFixed(1)} | ${row.consumer.maxMb} | ${row.brought.join(', ')} |`);
}
if (options.keep) console.log(`\nKept ${work}`);
else rmSync(work, { recursive: true, force: true });
console.log(`\npack-check took ${seconds(started)} s`);
if (failures.length > 0) {
  console.error(`pack-check failed (${failures.length}):\n${failures.map((failure) => `  - ${failure.split('\n')[0]}`).join('\n')}`);
  process.exit(1);
}
console.log('pack-check passed.');
