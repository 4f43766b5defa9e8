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
