import { AgentFlowError } from '../errors/agentflow-error';

/** Names an optional peer dependency and what needs it, for the error when it is missing. */
export interface OptionalDependencySettings {
  /** The npm package to install, e.g. `@qdrant/js-client-rest`. */
  packageName: string;
  /** What needs it, as the user called it, e.g. `createQdrantMemoryStore`. */
  feature: string;
}

/**
 * True when `error` says that `packageName` itself could not be found (ESM
 * `ERR_MODULE_NOT_FOUND` or CommonJS `MODULE_NOT_FOUND`), not a file missing inside it.
 */
export function isMissingPackageError(error: unknown, packageName: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && (message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`));
}

function missingDependency(settings: OptionalDependencySettings, cause: unknown): AgentFlowError {
  return new AgentFlowError({
    code: 'MISSING_DEPENDENCY',
    message:
      `${settings.feature} needs the optional peer dependency ${settings.packageName}, which is not installed. ` +
      `Install it next to AgentFlow: npm install ${settings.packageName}`,
    cause,
    details: { packageName: settings.packageName, feature: settings.feature },
  });
}

/**
 * Loads an optional peer dependency on first use. `load` is the caller's own
 * `() => import('pkg')`, so the package resolves from the caller's location; a missing
 * package becomes a MISSING_DEPENDENCY error that names it, any other failure is rethrown.
 */
export async function importOptional<Module>(load: () => Promise<Module>, settings: OptionalDependencySettings): Promise<Module> {
  try {
    return await load();
  } catch (error) {
    if (isMissingPackageError(error, settings.packageName)) throw missingDependency(settings, error);
    throw error;
  }
}

/**
 * The synchronous form for CommonJS packages behind synchronous factories: `load` is the
 * caller's `() => require('pkg')` (from `createRequire(import.meta.url)`).
 */
export function requireOptional<Module>(load: () => Module, settings: OptionalDependencySettings): Module {
  try {
    return load();
  } catch (error) {
    if (isMissingPackageError(error, settings.packageName)) throw missingDependency(settings, error);
    throw error;
  }
}
