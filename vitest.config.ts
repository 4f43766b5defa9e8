import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import workspace packages from their sources, so `vitest` needs no build.
const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));
// A subpath export `@agentflow/x/y` is the entry `packages/x/src/y/index.ts`.
const alias = readdirSync(packagesDir).flatMap((name) => [
  { find: new RegExp(`^@agentflow/${name}$`), replacement: `${packagesDir}${name}/src/index.ts` },
  { find: new RegExp(`^@agentflow/${name}/([a-z-]+)$`), replacement: `${packagesDir}${name}/src/$1/index.ts` },
]);

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'tools/**/*.test.ts', 'scripts/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
