// A Node module loader for a second, real AgentFlow process in the tests: it runs the
// executor's TypeScript sources (transpiled with the repository's typescript) without a
// build, resolving `@agentflow/<name>` to packages/<name>/src/index.ts as vitest does.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const packagesDir = fileURLToPath(new URL('../../../../', import.meta.url));
const ts = createRequire(`${packagesDir}../package.json`)('typescript');

export async function resolve(specifier, context, next) {
  const workspace = /^@agentflow\/([a-z-]+)$/.exec(specifier);
  if (workspace) return { url: pathToFileURL(`${packagesDir}${workspace[1]}/src/index.ts`).href, shortCircuit: true };
  if ((specifier.startsWith('./') || specifier.startsWith('../')) && context.parentURL?.endsWith('.ts')) {
    const base = fileURLToPath(new URL(specifier, context.parentURL));
    for (const candidate of [`${base}.ts`, `${base}/index.ts`]) {
      if (existsSync(candidate)) return { url: pathToFileURL(candidate).href, shortCircuit: true };
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const source = readFileSync(fileURLToPath(url), 'utf8');
  const output = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    fileName: fileURLToPath(url),
  });
  return { format: 'module', source: output.outputText, shortCircuit: true };
}
