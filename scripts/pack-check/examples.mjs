// Installs an example project against the tarballs, type-checks it, runs it, and compares
// its output with the block its README promises.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmInstall, runIn, writeProjectManifest } from './npm-project.mjs';

/** The first ```text block after a line that says what the example prints. */
export function expectedOutput(readme) {
  const match = /prints[^\n]*\n+```text\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error('its README has no ```text block after a line saying what it prints');
  return match[1].trimEnd();
}

/** Resolves with line count and timings, or rejects naming the first difference. */
export async function checkExample({ name, dir, tarballs, tsc, typeRoots }) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) {
    if (dep.startsWith('@agentflow/') && !tarballs.has(dep)) throw new Error(`depends on ${dep}, which is no package of this repository`);
  }
  const { dependencies, devDependencies, overrides, ...rest } = manifest;
  writeProjectManifest(dir, { name: manifest.name ?? name, dependencies, tarballs, ...(overrides ? { overrides } : {}), extra: rest });
  // Its devDependencies are typescript and @types/node: the repository's copies stand in.
  const installSeconds = await npmInstall(dir, { omitDev: true });
  return { ...(await runExample({ dir, tsc, typeRoots })), installSeconds };
}

/**
 * Type-checks an installed example, runs it, and compares what it prints with its README:
 * resolves with the line count and run time, or rejects naming the first line that differs.
 */
export async function runExample({ dir, tsc, typeRoots }) {
  await runIn(dir, process.execPath, [tsc, '-p', '.', '--typeRoots', typeRoots]);
  const startedRun = performance.now();
  const printed = (await runIn(dir, process.execPath, [join('dist', 'main.js')])).trimEnd();
  const runSeconds = (performance.now() - startedRun) / 1000;
  const expected = expectedOutput(readFileSync(join(dir, 'README.md'), 'utf8'));
  if (printed !== expected) {
    const got = printed.split('\n');
    const want = expected.split('\n');
    const line = want.findIndex((text, index) => got[index] !== text);
    const at = line === -1 ? want.length : line;
    throw new Error(`printed something else than its README says, first at line ${at + 1}:\n  README: ${want[at] ?? '(end)'}\n  printed: ${got[at] ?? '(end)'}\nFull output:\n${printed}`);
  }
  return { lines: printed.split('\n').length, runSeconds };
}
