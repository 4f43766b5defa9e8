// A fresh npm project whose @agentflow/* packages come from local tarballs, never the registry.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCOPE = '@agentflow/';

/**
 * `npm install` with the tarballs: direct dependencies as `file:` specs, the rest through
 * overrides, after the project's own `overrides` (an example's pin of a third-party package).
 */
export function writeProjectManifest(dir, { name, dependencies, tarballs, overrides: own = {}, extra = {} }) {
  const direct = {};
  for (const [dep, range] of Object.entries(dependencies)) direct[dep] = dep.startsWith(SCOPE) ? `file:${tarballs.get(dep)}` : range;
  const overrides = { ...own };
  for (const [dep, tarball] of tarballs) if (!(dep in direct)) overrides[dep] = `file:${tarball}`;
  const manifest = { name, version: '0.0.0', private: true, type: 'module', ...extra, dependencies: direct, overrides };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Installs without lifecycle scripts (no native builds, no CUDA download) and returns seconds taken. */
export async function npmInstall(dir, { omitDev = false } = {}) {
  const started = performance.now();
  const args = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', '--prefer-offline'];
  if (omitDev) args.push('--omit=dev');
  await run('npm', args, { cwd: dir, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } });
  return (performance.now() - started) / 1000;
}

/** Installed size of node_modules in MB (du -sk). */
export async function installedMb(dir) {
  const { stdout } = await run('du', ['-sk', join(dir, 'node_modules')]);
  return Number.parseInt(stdout, 10) / 1024;
}

/** The AgentFlow packages in node_modules (wherever npm placed them), short names, sorted. */
export function agentflowPackages(dir) {
  const found = new Set();
  const visit = (modules) => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith('.')) continue;
      if (entry.startsWith('@')) {
        for (const scoped of readdirSync(join(modules, entry))) {
          if (entry === '@agentflow') found.add(scoped);
          visit(join(modules, entry, scoped, 'node_modules'));
        }
      } else {
        visit(join(modules, entry, 'node_modules'));
      }
    }
  };
  visit(join(dir, 'node_modules'));
  return [...found].sort();
}

/** Runs a command in `dir`; resolves with stdout, rejects with stdout and stderr in the message. */
export async function runIn(dir, command, args, timeoutMs = 300_000) {
  try {
    const { stdout } = await run(command, args, { cwd: dir, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    throw new Error(`${command} ${args.join(' ')} failed in ${dir}:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
  }
}

/** Runs `task` over `items` with at most `limit` at once, keeping the order of results. */
export async function mapLimited(items, limit, task) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
