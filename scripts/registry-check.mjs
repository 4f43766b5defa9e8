#!/usr/bin/env node
// A release rehearsed against a real registry: copies the workspace's publishable state (with
// each package's built dist/) into a temporary release checkout, runs `changeset version` and
// commits there, starts Verdaccio on 127.0.0.1 (temporary config and storage; @agentflow/*
// never proxied, everything else from the upstream registry), creates a throwaway user, runs
// `changeset publish` against it exactly as a release does, and reads back what was published
// (versions, dist-tags, integrity, no workspace: range, exported files, git tags). Then an
// empty project `npm install`s every package by name from the registry, imports the entry
// points of scripts/pack-check/consumers.mjs and type-checks them with its typed uses; the
// projects of examples/ install their own manifests from the registry, are type-checked, run,
// and compared with their READMEs. The repository is only read. Needs `pnpm build` first.
// Run by .ci/run. Usage:
//   node scripts/registry-check.mjs [--each] [--no-examples] [--jobs N] [--keep]
// --each gives every consumer its own empty project (what each package brings alone, checked
// as pack-check does); slower: one install and two tsc runs per consumer.
import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { CONSUMERS } from './pack-check/consumers.mjs';
import { agentflowPackages, mapLimited } from './pack-check/npm-project.mjs';
import { readBackPublished } from './registry-check/published-tarballs.mjs';
import { checkRegistryExample } from './registry-check/registry-example.mjs';
import { checkEntries, installedVersion, lockProblems, npmInstallFromRegistry, writeEmptyProject } from './registry-check/registry-project.mjs';
import { commitCopy, copyTags, copyWorkspace, installCopy, publishablePackages } from './registry-check/release-copy.mjs';
import { startVerdaccio } from './registry-check/verdaccio.mjs';

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: options } = parseArgs({
  options: {
    each: { type: 'boolean', default: false },
    'no-examples': { type: 'boolean', default: false },
    jobs: { type: 'string', default: '2' },
    keep: { type: 'boolean', default: false },
  },
});
const jobs = Number(options.jobs);
if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs must be a positive integer, got ${JSON.stringify(options.jobs)}`);
const started = performance.now();
const seconds = (since) => ((performance.now() - since) / 1000).toFixed(1);
const failures = [];
const fail = (message) => {
  failures.push(message);
  console.error(`  FAIL ${message}`);
};
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const typeRoots = join(root, 'node_modules', '@types');
const changesetBin = (copy) => join(copy, 'node_modules', '@changesets', 'cli', 'bin.js');

const work = mkdtempSync(join(tmpdir(), 'agentflow-registry-check-'));
const copy = join(work, 'release');
let registry;
try {
  let since = performance.now();
  const fileCount = await copyWorkspace(root, copy);
  const installSeconds = await installCopy(copy);
  console.log(`[copy] ${fileCount} files and the built dist/ folders into ${copy}; pnpm install ${installSeconds.toFixed(1)} s (${seconds(since)} s)`);

  since = performance.now();
  const before = new Map(publishablePackages(copy).map((pkg) => [pkg.manifest.name, pkg.manifest.version]));
  await runChangeset(copy, ['version'], {});
  const packages = publishablePackages(copy);
  const bumped = packages.filter((pkg) => before.get(pkg.manifest.name) !== pkg.manifest.version);
  await commitCopy(copy, 'Version Packages');
  console.log(`[version] changeset version: ${bumped.length} of ${packages.length} packages bumped (${seconds(since)} s)`);
  for (const pkg of packages) console.log(`  ${pkg.manifest.name}: ${before.get(pkg.manifest.name)} -> ${pkg.manifest.version}`);

  since = performance.now();
  const upstream = (await run('npm', ['config', 'get', 'registry'], { cwd: root })).stdout.trim();
  mkdirSync(join(work, 'registry'));
  registry = await startVerdaccio({ dir: join(work, 'registry'), upstream });
  for (const pkg of packages) {
    if (await registry.packument(pkg.manifest.name)) throw new Error(`the fresh registry already serves ${pkg.manifest.name}: @agentflow/* must never be proxied`);
  }
  const token = await registry.addUser(`release-${process.pid}`);
  // The token goes only into the release copy's .npmrc; pnpm 12 reads `registry` from there
  // (it ignores npm_config_registry), npm and changesets from the environment.
  appendFileSync(join(copy, '.npmrc'), `\nregistry=${registry.url}\n//127.0.0.1:${registry.port}/:_authToken=${token}\n`);
  console.log(`[registry] Verdaccio at ${registry.url} (upstream ${upstream} for everything but @agentflow/*), user created (${seconds(since)} s)`);

  since = performance.now();
  const publishEnv = { npm_config_registry: registry.url, pnpm_config_registry: registry.url };
  const publishOutput = await runChangeset(copy, ['publish'], publishEnv);
  const publishedLines = publishOutput.split('\n').filter((line) => /^🦋\s+@agentflow\/\S+@\S+$/.test(line.trim()));
  console.log(`[publish] changeset publish: ${publishedLines.length} packages published (${seconds(since)} s)`);

  since = performance.now();
  mkdirSync(join(work, 'tarballs'));
  const { published, problems } = await readBackPublished({ registry, packages, dir: join(work, 'tarballs') });
  for (const problem of problems) fail(problem);
  const tags = new Set(await copyTags(copy));
  for (const pkg of packages) {
    const tag = `${pkg.manifest.name}@${pkg.manifest.version}`;
    if (!tags.has(tag)) fail(`changeset publish did not tag ${tag} (tags: ${[...tags].join(', ') || 'none'})`);
  }
  const kilobytes = [...published.values()].reduce((sum, entry) => sum + entry.bytes, 0) / 1024;
  console.log(`[read back] ${published.size} packages, ${kilobytes.toFixed(0)} kB of tarballs: integrity, dist-tags, manifests, exported files, git tags (${seconds(since)} s)`);

  since = performance.now();
  if (options.each) await checkEachConsumer({ published, url: registry.url });
  else await checkShared({ packages, published, url: registry.url });
  console.log(`[consumers] done (${seconds(since)} s)`);

  if (!options['no-examples']) {
    since = performance.now();
    const examplesDir = join(root, 'examples');
    const examples = readdirSync(examplesDir).filter((name) => existsSync(join(examplesDir, name, 'package.json')));
    console.log(`[examples] ${examples.join(', ')}, ${Math.min(jobs, examples.length)} at a time`);
    await mapLimited(examples, jobs, async (name) => {
      const dir = join(work, 'examples', name);
      const result = await checkRegistryExample({ source: join(examplesDir, name), dir, url: registry.url, published, tsc, typeRoots }).catch((error) => ({ error }));
      if (result.error) fail(`examples/${name}: ${result.error.message}`);
      else console.log(`  examples/${name}: printed what its README says (${result.lines} lines), install ${result.installSeconds.toFixed(1)} s, run ${result.runSeconds.toFixed(1)} s`);
    });
    console.log(`[examples] done (${seconds(since)} s)`);
  }
} catch (error) {
  fail(error.message);
  if (registry) console.error(`Verdaccio's log:\n${registry.logTail()}`);
} finally {
  await registry?.stop();
  if (options.keep) console.log(`\nKept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

if (failures.length > 0) {
  console.error(`\nregistry-check failed (${failures.length}):\n${failures.map((failure) => `  - ${failure.split('\n')[0]}`).join('\n')}`);
  console.error(`registry-check took ${seconds(started)} s`);
  process.exit(1);
}
console.log('registry-check passed.');
console.log(`registry-check took ${seconds(started)} s`);

/** Runs the release copy's own changesets CLI; rejects with its whole output. */
async function runChangeset(cwd, args, env) {
  try {
    const { stdout, stderr } = await run(process.execPath, [changesetBin(cwd), ...args], { cwd, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 });
    return `${stdout}${stderr}`;
  } catch (error) {
    throw new Error(`changeset ${args.join(' ')} failed in ${cwd}:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
  }
}

/** One empty project per consumer: `npm install` its packages, then check what came and its entry points. */
async function checkEachConsumer({ published, url }) {
  console.log(`[consumers] ${CONSUMERS.length} empty projects, ${jobs} at a time`);
  await mapLimited(CONSUMERS, jobs, async (consumer) => {
    const names = consumer.install.map((name) => `@agentflow/${name}`);
    const label = names.join(' + ');
    const dir = join(work, 'consumers', consumer.install.join('+'));
    mkdirSync(dir, { recursive: true });
    writeEmptyProject(dir, `consumer-${consumer.install.join('-')}`, url);
    let installSeconds;
    try {
      installSeconds = await npmInstallFromRegistry(dir, names);
    } catch (error) {
      fail(`${label}: ${error.message}`);
      return;
    }
    for (const name of names) {
      const version = installedVersion(dir, name);
      if (version !== published.get(name)?.version) fail(`${label}: npm install ${name} gave ${version}, the registry's latest is ${published.get(name)?.version}`);
    }
    const brought = agentflowPackages(dir);
    if (brought.join(',') !== [...consumer.brings].sort().join(',')) fail(`${label}: brought ${brought.join(', ')}; expected exactly ${[...consumer.brings].sort().join(', ')}`);
    for (const problem of lockProblems(dir, url, published)) fail(`${label}: ${problem}`);
    const entries = consumer.imports ?? names.slice(0, 1);
    const { problems, exportCounts } = await checkEntries({ dir, entries, tsc, typeRoots });
    for (const problem of problems) fail(`${label}: ${problem}`);
    const counts = entries.map((entry) => `${entry} ${exportCounts[entry] ?? '?'}`).join(', ');
    console.log(`  ${label}: install ${installSeconds.toFixed(1)} s, brought ${brought.join(', ')}; exports ${counts}; types checked`);
  });
}

/** One project with every package: a single `npm install`, then every consumer's entry points. */
async function checkShared({ packages, published, url }) {
  const names = packages.map((pkg) => pkg.manifest.name);
  console.log(`[consumers] one empty project installing all ${names.length} packages`);
  const dir = join(work, 'consumers', 'all');
  mkdirSync(dir, { recursive: true });
  writeEmptyProject(dir, 'consumer-all', url);
  const installSeconds = await npmInstallFromRegistry(dir, names);
  for (const name of names) {
    if (installedVersion(dir, name) !== published.get(name).version) fail(`npm install ${name} gave ${installedVersion(dir, name)}, the registry's latest is ${published.get(name).version}`);
  }
  const brought = agentflowPackages(dir).map((short) => `@agentflow/${short}`);
  if (brought.join(',') !== [...names].sort().join(',')) fail(`installing all packages brought ${brought.join(', ')}; expected exactly ${[...names].sort().join(', ')}`);
  for (const problem of lockProblems(dir, url, published)) fail(problem);
  const entries = [...new Set(CONSUMERS.flatMap((consumer) => consumer.imports ?? [`@agentflow/${consumer.install[0]}`]))];
  const { problems, exportCounts } = await checkEntries({ dir, entries, tsc, typeRoots });
  for (const problem of problems) fail(problem);
  console.log(`  npm install of ${names.length} packages: ${installSeconds.toFixed(1)} s; each one the published version, from ${url}, with its integrity`);
  console.log(`  ${entries.length} entry points imported and type-checked (node16, bundler): ${entries.map((entry) => `${entry.slice('@agentflow/'.length)} ${exportCounts[entry] ?? '?'}`).join(', ')}`);
}
