export { createProgram, describeFailure, type ProgramIo } from './program';
export { loadConfig } from './config/load-config';
export { runConfigSchema, type RunConfig } from './config/schema';
export { EXIT } from './exit-codes';
