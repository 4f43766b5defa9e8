/** A plain object (not null, not a list): a config block as YAML or JSON gives it. */
export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
