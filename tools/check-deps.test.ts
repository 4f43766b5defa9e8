import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM script without types
import { checkDependencies } from './check-deps.mjs';

function workspace(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'agentflow-deps-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const manifest = (name: string, deps: string[] = []) =>
  JSON.stringify({ name: `@agentflow/${name}`, dependencies: Object.fromEntries(deps.map((d) => [`@agentflow/${d}`, 'workspace:*'])) });

describe('dependency-direction check', () => {
  it('passes a workspace whose imports point down', () => {
    const root = workspace({
      'packages/core/package.json': manifest('core'),
      'packages/core/src/index.ts': "export const x = 1;\n",
      'packages/tensor/package.json': manifest('tensor', ['core']),
      'packages/tensor/src/index.ts': "import { x } from '@agentflow/core';\nexport const y = x;\n",
    });
    expect(checkDependencies(root)).toEqual([]);
  });

  it('fails on an upward import and names both packages', () => {
    const root = workspace({
      'packages/core/package.json': manifest('core', ['dapo']),
      'packages/core/src/index.ts': "import { train } from '@agentflow/dapo';\nexport { train };\n",
      'packages/dapo/package.json': manifest('dapo', ['core']),
      'packages/dapo/src/index.ts': "export const train = 1;\n",
    });
    const violations = checkDependencies(root);
    expect(violations.join('\n')).toMatch(/@agentflow\/core \(layer 0\) depends on @agentflow\/dapo \(layer 6\)/);
    expect(violations.join('\n')).toMatch(/package import cycle/);
  });

  it('fails on an import that package.json does not declare', () => {
    const root = workspace({
      'packages/core/package.json': manifest('core'),
      'packages/core/src/index.ts': '',
      'packages/models/package.json': manifest('models'),
      'packages/models/src/index.ts': "export * from '@agentflow/core';\n",
    });
    expect(checkDependencies(root).join('\n')).toMatch(/imports @agentflow\/core but @agentflow\/models does not declare it/);
  });

  it('fails on a cycle between files of one package, but not on type-only imports', () => {
    const root = workspace({
      'packages/core/package.json': manifest('core'),
      'packages/core/src/a.ts': "import { b } from './b';\nexport const a = b;\n",
      'packages/core/src/b.ts': "import { a } from './a';\nexport const b = a;\n",
      'packages/core/src/c.ts': "import type { D } from './d';\nexport type C = D;\n",
      'packages/core/src/d.ts': "import type { C } from './c';\nexport type D = C;\n",
    });
    const violations = checkDependencies(root);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(/import cycle in @agentflow\/core: packages\/core\/src\/a\.ts -> packages\/core\/src\/b\.ts -> packages\/core\/src\/a\.ts/);
  });

  it('fails on a declared workspace dependency that no file imports, and on one only tests import', () => {
    const root = workspace({
      'packages/core/package.json': manifest('core'),
      'packages/core/src/index.ts': 'export const x = 1;\n',
      'packages/tensor/package.json': manifest('tensor'),
      'packages/tensor/src/index.ts': 'export const t = 1;\n',
      'packages/dapo/package.json': manifest('dapo', ['core', 'tensor']),
      'packages/dapo/src/index.ts': "export const d = 1;\n",
      'packages/dapo/src/index.test.ts': "import { t } from '@agentflow/tensor';\nexport const used = t;\n",
    });
    const violations = checkDependencies(root).join('\n');
    expect(violations).toMatch(/declares @agentflow\/core in dependencies but no shipped file of src\/ imports it \(no file imports it: remove it\)/);
    expect(violations).toMatch(/declares @agentflow\/tensor in dependencies .* \(only tests or benchmarks import it: move it to devDependencies\)/);
  });

  it('accepts a devDependency used by tests, but not by shipped code, and fails on an unused one', () => {
    const root = workspace({
      'packages/core/package.json': manifest('core'),
      'packages/core/src/index.ts': 'export const x = 1;\n',
      'packages/tensor/package.json': manifest('tensor'),
      'packages/tensor/src/index.ts': 'export const t = 1;\n',
      'packages/models/package.json': manifest('models'),
      'packages/models/src/index.ts': 'export const m = 1;\n',
      'packages/dapo/package.json': JSON.stringify({
        name: '@agentflow/dapo',
        devDependencies: { '@agentflow/core': 'workspace:*', '@agentflow/tensor': 'workspace:*', '@agentflow/models': 'workspace:*' },
      }),
      'packages/dapo/src/index.ts': "import { x } from '@agentflow/core';\nexport const d = x;\n",
      'packages/dapo/src/loop/__fixtures__/policy.ts': "import { t } from '@agentflow/tensor';\nexport const p = t;\n",
    });
    const violations = checkDependencies(root);
    expect(violations).toHaveLength(2);
    expect(violations[0]).toMatch(/packages\/dapo\/src\/index\.ts: shipped code imports @agentflow\/core, which @agentflow\/dapo declares only in devDependencies/);
    expect(violations[1]).toMatch(/declares @agentflow\/models in devDependencies but no file \(src, tests, bench\) imports it/);
  });

  it('fails on an eager import of an optional peer, and accepts type-only and lazy ones', () => {
    const peerManifest = JSON.stringify({
      name: '@agentflow/memory',
      dependencies: { '@agentflow/core': 'workspace:*' },
      peerDependencies: { 'better-sqlite3': '^12.0.0', '@qdrant/js-client-rest': '^1.18.0' },
      peerDependenciesMeta: { 'better-sqlite3': { optional: true }, '@qdrant/js-client-rest': { optional: true } },
    });
    const root = workspace({
      'packages/core/package.json': manifest('core'),
      'packages/core/src/index.ts': 'export const x = 1;\n',
      'packages/memory/package.json': peerManifest,
      'packages/memory/src/index.ts': [
        "import { x } from '@agentflow/core';",
        "import { type QdrantClient } from '@qdrant/js-client-rest';",
        "import type Database from 'better-sqlite3';",
        "export const load = () => import('@qdrant/js-client-rest');",
        "export const open = () => require('better-sqlite3');",
        'export const y = x;',
      ].join('\n'),
      'packages/memory/src/eager.ts': "import Database from 'better-sqlite3';\nexport { Database };\n",
    });
    const violations = checkDependencies(root);
    expect(violations).toEqual([
      expect.stringMatching(/packages\/memory\/src\/eager\.ts: imports the optional peer better-sqlite3 eagerly; load it on first use/),
    ]);
  });

  it('exits non-zero from the command line on a violation', () => {
    const root = workspace({
      'packages/core/package.json': manifest('core', ['trainer']),
      'packages/core/src/index.ts': '',
    });
    let status = 0;
    try {
      execFileSync('node', [join(__dirname, 'check-deps.mjs'), root], { stdio: 'pipe' });
    } catch (error) {
      status = (error as { status: number }).status;
    }
    expect(status).toBe(1);
  });
});
