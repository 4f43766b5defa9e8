// Runs a project of examples/ against the loopback registry's copies: its package.json as a
// user clones it (its own @agentflow/* ranges, its own overrides), the registry in its .npmrc,
// then type-checked, run, and its output compared with what its README says it prints.
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runExample } from '../pack-check/examples.mjs';
import { lockProblems, npmInstallFromRegistry, writeRegistryNpmrc } from './registry-project.mjs';

/** Resolves with line count and timings, or rejects naming what went wrong. */
export async function checkRegistryExample({ source, dir, url, published, tsc, typeRoots }) {
  cpSync(source, dir, { recursive: true, filter: (path) => !/[\\/](node_modules|dist|package-lock\.json)$/.test(path) });
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) {
    if (dep.startsWith('@agentflow/') && !published.has(dep)) throw new Error(`depends on ${dep}, which this run did not publish`);
  }
  writeRegistryNpmrc(dir, url);
  // Its devDependencies are typescript and @types/node: the repository's copies stand in.
  const installSeconds = await npmInstallFromRegistry(dir, [], { omitDev: true });
  const problems = lockProblems(dir, url, published);
  if (problems.length > 0) throw new Error(`installed AgentFlow packages that are not the published ones:\n  ${problems.join('\n  ')}`);
  return { ...(await runExample({ dir, tsc, typeRoots })), installSeconds };
}
