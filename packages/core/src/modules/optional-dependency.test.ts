import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { AgentFlowError } from '../errors/agentflow-error';
import { importOptional, isMissingPackageError, requireOptional } from './optional-dependency';

const require = createRequire(import.meta.url);
const absent = '@agentflow-test/not-installed';
// A variable specifier, so tsc does not look for the absent package.
const specifier: string = absent;

describe('optional peer dependencies', () => {
  it('turns a missing ESM package into MISSING_DEPENDENCY naming the package and the feature', async () => {
    const error = await importOptional(() => import(specifier), { packageName: absent, feature: 'createThing' }).catch(
      (caught: unknown) => caught,
    );
    expect(AgentFlowError.hasCode(error, 'MISSING_DEPENDENCY')).toBe(true);
    expect((error as Error).message).toBe(
      `createThing needs the optional peer dependency ${absent}, which is not installed. Install it next to AgentFlow: npm install ${absent}`,
    );
  });

  it('does the same for a CommonJS require', () => {
    expect(() => requireOptional(() => require(specifier), { packageName: absent, feature: 'openThing' })).toThrowError(
      /openThing needs the optional peer dependency @agentflow-test\/not-installed/,
    );
  });

  it('returns the module when it is installed, and rethrows other failures unchanged', async () => {
    const zod = await importOptional(() => import('zod'), { packageName: 'zod', feature: 'schemas' });
    expect(typeof zod.z.object).toBe('function');
    const broken = new Error('syntax error in the package');
    await expect(importOptional(() => Promise.reject(broken), { packageName: 'zod', feature: 'schemas' })).rejects.toBe(broken);
  });

  it('does not mistake a missing file of another package for the optional one', () => {
    const other = Object.assign(new Error("Cannot find module 'left-pad'"), { code: 'MODULE_NOT_FOUND' });
    expect(isMissingPackageError(other, absent)).toBe(false);
    expect(isMissingPackageError(other, 'left-pad')).toBe(true);
  });
});
