#!/usr/bin/env node
// Fails when an import points up the package map of ARCHITECTURE.md (the layers below), when a package
// imports a workspace package it does not declare, when a declared edge has no import
// behind it (a dependency that no shipped file imports, a devDependency that nothing
// imports), when shipped code imports what only devDependencies declare, when an optional
// peer is imported eagerly, or when imports form a cycle (between packages, or between
// the files of one package). Run by `pnpm test` and CI.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Layer of each package: a package may import only packages of a lower layer. */
export const PACKAGE_LAYERS = {
  core: 0,
  tensor: 1,
  tracking: 1,
  models: 2,
  llm: 3,
  planner: 4,
  executor: 4,
  verifier: 4,
  memory: 4,
  flow: 5,
  eval: 6,
  prm: 6,
  dapo: 6,
  trainer: 7,
};

const SCOPE = '@agentflow/';
const importPattern =
  /(?:^|[\s;])(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/g;
const builtinPattern = /^node:/;

/** Files under `dir` that can hold imports; fixtures only when `withFixtures`. */
function listSourceFiles(dir, withFixtures = false) {
  if (!existsSync(dir)) return [];
  const files = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry !== 'node_modules' && (withFixtures || entry !== '__fixtures__')) files.push(...listSourceFiles(path, withFixtures));
    } else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry) && !/\.d\.ts$/.test(entry)) {
      files.push(path);
    }
  }
  return files;
}

/** Tests, test helpers and fixtures: they may use what only devDependencies declare. */
export function isTestFile(path) {
  return /\.test(-helper)?\.[cm]?[jt]sx?$/.test(path) || /[\\/]__fixtures__[\\/]/.test(path);
}

/** The package a bare specifier names (`@scope/name` or `name`), or undefined. */
export function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/') || builtinPattern.test(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Every import of a file: { specifier, typeOnly, lazy }. `typeOnly` for `import type` and
 * for braces that hold only `type X` names; `lazy` for `import()` and `require()`.
 */
export function parseImports(source) {
  const imports = [];
  for (const match of source.matchAll(importPattern)) {
    const specifier = match[4] ?? match[5];
    if (!specifier) continue;
    const clause = (match[3] ?? '').trim();
    const braces = /^\{([^}]*)\}\s*from$/.exec(clause);
    const names = (braces?.[1] ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
    const typeOnly = Boolean(match[2]) || (names.length > 0 && names.every((name) => /^type\s/.test(name)));
    imports.push({ specifier, typeOnly, lazy: match[5] !== undefined });
  }
  return imports;
}

function findCycle(graph) {
  const state = new Map();
  const stack = [];
  const visit = (node) => {
    state.set(node, 'active');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'active') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const cycle = visit(next);
        if (cycle) return cycle;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    if (!state.has(node)) {
      const cycle = visit(node);
      if (cycle) return cycle;
    }
  }
  return undefined;
}

function resolveRelative(fromFile, specifier, knownFiles) {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base, `${base}.ts`, `${base}.tsx`, `${base}.mjs`, `${base}.js`, join(base, 'index.ts')];
  const stripped = base.replace(/\.js$/, '');
  candidates.push(`${stripped}.ts`);
  return candidates.find((candidate) => knownFiles.has(candidate));
}

/** The names a manifest declares, by kind: runtime (dependencies and peers), optional peers, dev. */
function declaredNames(manifest) {
  const runtime = new Set(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }));
  const optional = new Set(
    Object.keys(manifest.peerDependencies ?? {}).filter((dep) => manifest.peerDependenciesMeta?.[dep]?.optional === true),
  );
  return { runtime, optional, dev: new Set(Object.keys(manifest.devDependencies ?? {})) };
}

/** What the files of a package import: for each package name, the files of each kind. */
function collectUsage(root, dir, name, manifest, violations) {
  const { runtime, optional, dev } = declaredNames(manifest);
  const shippedUse = new Map();
  const anyUse = new Set();
  const files = listSourceFiles(join(dir, 'src'));
  const knownFiles = new Set(files);
  const fileGraph = new Map();
  const scanned = [...listSourceFiles(join(dir, 'src'), true), ...listSourceFiles(join(dir, 'bench'), true)];
  for (const file of scanned) {
    const where = relative(root, file);
    const shipped = knownFiles.has(file) && !isTestFile(file);
    const local = [];
    for (const { specifier, typeOnly, lazy } of parseImports(readFileSync(file, 'utf8'))) {
      const target = packageOf(specifier);
      if (target === undefined) {
        if (specifier.startsWith('.') && !typeOnly && !lazy && knownFiles.has(file)) {
          const resolved = resolveRelative(file, specifier, knownFiles);
          if (resolved) local.push(resolved);
        }
        continue;
      }
      if (target === `${SCOPE}${name}`) continue;
      anyUse.add(target);
      const workspace = target.startsWith(SCOPE);
      if (workspace && !runtime.has(target) && !dev.has(target)) {
        violations.push(`${where}: imports ${target} but ${manifest.name} does not declare it in package.json.`);
      } else if (shipped && workspace && !runtime.has(target)) {
        violations.push(
          `${where}: shipped code imports ${target}, which ${manifest.name} declares only in devDependencies (declare it in dependencies, or as an optional peer).`,
        );
      }
      if (shipped && optional.has(target) && !typeOnly && !lazy) {
        violations.push(
          `${where}: imports the optional peer ${target} eagerly; load it on first use (import() through importOptional, or requireOptional) or import only its types.`,
        );
      }
      if (shipped) shippedUse.set(target, where);
    }
    if (knownFiles.has(file)) fileGraph.set(file, local);
  }
  return { runtime, dev, shippedUse, anyUse, fileGraph };
}

/** Declared edges with no import behind them. */
function unusedDeclarations(root, dir, manifest, usage) {
  const violations = [];
  const where = relative(root, join(dir, 'package.json'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) {
    if (!usage.shippedUse.has(dep)) {
      const hint = usage.anyUse.has(dep) ? 'only tests or benchmarks import it: move it to devDependencies' : 'no file imports it: remove it';
      violations.push(`${where}: declares ${dep} in dependencies but no shipped file of src/ imports it (${hint}).`);
    }
  }
  for (const dep of Object.keys(manifest.peerDependencies ?? {})) {
    // A peer may be loaded by a computed specifier (optional third-party peers); a workspace peer may not.
    if (dep.startsWith(SCOPE) && !usage.shippedUse.has(dep)) {
      violations.push(`${where}: declares ${dep} in peerDependencies but no shipped file of src/ imports it.`);
    }
  }
  for (const dep of usage.dev) {
    if (dep.startsWith(SCOPE) && !usage.runtime.has(dep) && !usage.anyUse.has(dep)) {
      violations.push(`${where}: declares ${dep} in devDependencies but no file (src, tests, bench) imports it.`);
    }
  }
  return violations;
}

/** Checks the workspace at `root`; returns a list of human-readable violations. */
export function checkDependencies(root) {
  const violations = [];
  const packageDirs = [];
  for (const group of ['packages', 'apps']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (existsSync(join(dir, name, 'package.json'))) packageDirs.push(join(dir, name));
    }
  }
  const packageGraph = new Map();
  for (const dir of packageDirs) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const name = String(manifest.name ?? '').replace(SCOPE, '');
    const layer = PACKAGE_LAYERS[name];
    if (layer === undefined) {
      violations.push(`${relative(root, dir)}: package "${manifest.name}" is not on the package map (tools/check-deps.mjs).`);
      continue;
    }
    const usage = collectUsage(root, dir, name, manifest, violations);
    violations.push(...unusedDeclarations(root, dir, manifest, usage));
    const edges = new Set(
      [...usage.runtime, ...usage.dev, ...usage.anyUse].filter((dep) => dep.startsWith(SCOPE)).map((dep) => dep.slice(SCOPE.length)),
    );
    for (const target of edges) {
      const targetLayer = PACKAGE_LAYERS[target];
      if (target === name) {
        violations.push(`${relative(root, dir)}: ${manifest.name} imports itself by its package name.`);
      } else if (targetLayer === undefined) {
        violations.push(`${relative(root, dir)}: depends on unknown workspace package ${SCOPE}${target}.`);
      } else if (targetLayer >= layer) {
        violations.push(
          `${relative(root, dir)}: ${manifest.name} (layer ${layer}) depends on ${SCOPE}${target} (layer ${targetLayer}); ` +
            'imports must point down the package map in ARCHITECTURE.md.',
        );
      }
    }
    packageGraph.set(name, [...edges]);
    const fileCycle = findCycle(usage.fileGraph);
    if (fileCycle) {
      violations.push(`import cycle in ${manifest.name}: ${fileCycle.map((file) => relative(root, file)).join(' -> ')}`);
    }
  }
  const packageCycle = findCycle(packageGraph);
  if (packageCycle) violations.push(`package import cycle: ${packageCycle.map((n) => SCOPE + n).join(' -> ')}`);
  return violations;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const violations = checkDependencies(root);
  if (violations.length > 0) {
    console.error(`Dependency check failed (${violations.length}):\n${violations.map((v) => `  - ${v}`).join('\n')}`);
    process.exit(1);
  }
  console.log('Dependency check passed: every import points down the package map, every declared edge is imported, no cycles.');
}
