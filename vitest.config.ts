import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import workspace packages from their sources, so `vitest` needs no build.
const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));
const alias = Object.fromEntries(
  readdirSync(packagesDir).map((name) => [`@agentflow/${name}`, `${packagesDir}${name}/src/index.ts`]),
);

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'tools/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
