// An npm project that gets @agentflow/* from the loopback registry, the way a user's project
// gets them from npm: `npm install <names>` with the registry in the project's .npmrc. Then
// what it installed is checked against what was published (version, tarball URL, integrity),
// its entry points are imported as ESM and type-checked with the repository's TypeScript.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TYPED_USES } from '../pack-check/consumers.mjs';
import { runIn } from '../pack-check/npm-project.mjs';

const run = promisify(execFile);
const SCOPE = '@agentflow/';

/**
 * The project's .npmrc: everything from the loopback registry (@agentflow/* named as well, so
 * no user-level scope setting wins), and `resolved` kept in package-lock.json, which
 * lockProblems reads (a machine's npmrc may set omit-lockfile-registry-resolved).
 */
export function writeRegistryNpmrc(dir, url) {
  writeFileSync(join(dir, '.npmrc'), `registry=${url}\n@agentflow:registry=${url}\nomit-lockfile-registry-resolved=false\n`);
}

/** An empty ESM project (what `npm init -y` and `"type": "module"` give). */
export function writeEmptyProject(dir, name, url) {
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, version: '0.0.0', private: true, type: 'module' }, null, 2)}\n`);
  writeRegistryNpmrc(dir, url);
}

/**
 * `npm install [names]` without lifecycle scripts (no native builds, no CUDA download), and
 * without --prefer-offline: the registry's documents are new on every run. Returns seconds.
 */
export async function npmInstallFromRegistry(dir, names = [], { omitDev = false } = {}) {
  const started = performance.now();
  const args = ['install', ...names, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];
  if (omitDev) args.push('--omit=dev');
  try {
    await run('npm', args, { cwd: dir, maxBuffer: 16 * 1024 * 1024, timeout: 240_000, env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } });
  } catch (error) {
    throw new Error(`npm ${args.join(' ')} failed in ${dir}:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
  }
  return (performance.now() - started) / 1000;
}

/**
 * Problems with the @agentflow/* packages in the project's package-lock.json: each must be the
 * published version, downloaded from `url`, with the integrity the registry announced.
 */
export function lockProblems(dir, url, published) {
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
  const problems = [];
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    const at = path.lastIndexOf(`node_modules/${SCOPE}`);
    if (at === -1) continue;
    const name = path.slice(at + 'node_modules/'.length);
    const expected = published.get(name);
    if (!expected) {
      problems.push(`${name} is installed but was not published in this run`);
      continue;
    }
    if (entry.version !== expected.version) problems.push(`${name}: installed ${entry.version}, published ${expected.version}`);
    if (!entry.resolved?.startsWith(url)) problems.push(`${name}: resolved from ${entry.resolved}, not the loopback registry ${url}`);
    if (entry.integrity !== expected.integrity) problems.push(`${name}: integrity ${entry.integrity} differs from the published ${expected.integrity}`);
  }
  return problems;
}

/**
 * Imports every entry as ESM in one Node process (each must export something), then
 * type-checks one file per entry that imports its whole namespace, plus pack-check's typed use
 * of it where one exists, with node16 and bundler resolution and skipLibCheck off (one tsc run
 * per resolution for all entries). Returns the problems and the export count of each entry.
 */
export async function checkEntries({ dir, entries, tsc, typeRoots }) {
  const problems = [];
  const script = `const counts = {};
for (const entry of ${JSON.stringify(entries)}) {
  try { counts[entry] = Object.keys(await import(entry)).length; } catch (error) { counts[entry] = String(error?.stack ?? error); }
}
console.log(JSON.stringify(counts));`;
  const exportCounts = {};
  try {
    Object.assign(exportCounts, JSON.parse((await runIn(dir, process.execPath, ['--input-type=module', '-e', script])).trim().split('\n').at(-1)));
  } catch (error) {
    problems.push(`importing ${entries.join(', ')} failed\n${error.message}`);
  }
  for (const [entry, count] of Object.entries(exportCounts)) {
    if (typeof count === 'string') problems.push(`import ${entry} failed\n${count}`);
    else if (count === 0) problems.push(`import ${entry} has no exports`);
  }
  const files = [];
  for (const [index, entry] of entries.entries()) {
    writeFileSync(join(dir, `namespace-${index}.ts`), `import * as api from '${entry}';\nexport const names: string[] = Object.keys(api);\n`);
    files.push(`namespace-${index}.ts`);
    if (TYPED_USES[entry]) {
      writeFileSync(join(dir, `typed-${index}.ts`), `${TYPED_USES[entry]}\n`);
      files.push(`typed-${index}.ts`);
    }
  }
  for (const [module, resolution] of [
    ['node16', 'node16'],
    ['esnext', 'bundler'],
  ]) {
    const args = [tsc, '--noEmit', '--strict', '--skipLibCheck', 'false', '--target', 'es2022', '--module', module];
    args.push('--moduleResolution', resolution, '--types', 'node', '--typeRoots', typeRoots, ...files);
    await runIn(dir, process.execPath, args).catch((error) => problems.push(`tsc (${resolution}) failed\n${error.message}`));
  }
  return { problems, exportCounts };
}

/** The version of `name` installed at the top of the project's node_modules, if any. */
export function installedVersion(dir, name) {
  const path = join(dir, 'node_modules', name, 'package.json');
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')).version : undefined;
}
