// Node module hooks that let a child process run the packages' TypeScript sources (tests
// only; `node --import <repo>/tools/typescript-hooks/register-typescript.mjs script.ts`): @agentflow/* resolves to packages/*/src, extensionless relative imports to .ts, and
// .ts files are transpiled with the repository's TypeScript.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const packagesDirectory = new URL('../../packages/', import.meta.url);

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith('@agentflow/')) {
    const name = specifier.slice('@agentflow/'.length);
    return { url: new URL(`${name}/src/index.ts`, packagesDirectory).href, shortCircuit: true };
  }
  if ((specifier.startsWith('./') || specifier.startsWith('../')) && context.parentURL?.endsWith('.ts')) {
    const base = new URL(specifier, context.parentURL).href;
    for (const candidate of [base, `${base}.ts`, `${base}/index.ts`]) {
      if (candidate.endsWith('.ts') && existsSync(fileURLToPath(candidate))) {
        return { url: candidate, shortCircuit: true };
      }
    }
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const fileName = fileURLToPath(url);
  const output = ts.transpileModule(await readFile(fileName, 'utf8'), {
    fileName,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false },
  });
  return { format: 'module', source: output.outputText, shortCircuit: true };
}
