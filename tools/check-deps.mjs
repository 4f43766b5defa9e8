#!/usr/bin/env node
// Fails when an import points up the package map of ../shared/DESIGN.md, when a package
// imports a workspace package it does not declare, or when imports form a cycle (between
// packages, or between the files of one package). Run by `pnpm test` and CI.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Layer of each package: a package may import only packages of a lower layer. */
export const PACKAGE_LAYERS = {
  core: 0,
  tensor: 1,
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
const importPattern = /(?:^|[\s;])(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function listSourceFiles(dir) {
  if (!existsSync(dir)) return [];
  const files = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry !== 'node_modules' && entry !== '__fixtures__') files.push(...listSourceFiles(path));
    } else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry) && !/\.d\.ts$/.test(entry)) {
      files.push(path);
    }
  }
  return files;
}

/** Every import of a file: { specifier, typeOnly }. */
export function parseImports(source) {
  const imports = [];
  for (const match of source.matchAll(importPattern)) {
    const specifier = match[3] ?? match[4];
    if (specifier) imports.push({ specifier, typeOnly: Boolean(match[2]) });
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
    const declared = new Set(
      Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.devDependencies })
        .filter((dep) => dep.startsWith(SCOPE))
        .map((dep) => dep.slice(SCOPE.length)),
    );
    const edges = new Set(declared);
    const files = listSourceFiles(join(dir, 'src'));
    const knownFiles = new Set(files);
    const fileGraph = new Map();
    for (const file of files) {
      const where = relative(root, file);
      const local = [];
      for (const { specifier, typeOnly } of parseImports(readFileSync(file, 'utf8'))) {
        if (specifier.startsWith(SCOPE)) {
          const target = specifier.slice(SCOPE.length).split('/')[0];
          edges.add(target);
          if (target !== name && !declared.has(target)) {
            violations.push(`${where}: imports ${SCOPE}${target} but ${manifest.name} does not declare it in package.json.`);
          }
        } else if (specifier.startsWith('.') && !typeOnly) {
          const target = resolveRelative(file, specifier, knownFiles);
          if (target) local.push(target);
        }
      }
      fileGraph.set(file, local);
    }
    for (const target of edges) {
      const targetLayer = PACKAGE_LAYERS[target];
      if (target === name) {
        violations.push(`${relative(root, dir)}: ${manifest.name} imports itself by its package name.`);
      } else if (targetLayer === undefined) {
        violations.push(`${relative(root, dir)}: depends on unknown workspace package ${SCOPE}${target}.`);
      } else if (targetLayer >= layer) {
        violations.push(
          `${relative(root, dir)}: ${manifest.name} (layer ${layer}) depends on ${SCOPE}${target} (layer ${targetLayer}); ` +
            'imports must point down the package map in DESIGN.md.',
        );
      }
    }
    packageGraph.set(name, [...edges]);
    const fileCycle = findCycle(fileGraph);
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
  console.log('Dependency check passed: every import points down the package map, no cycles.');
}
