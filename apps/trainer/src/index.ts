export { createProgram, describeFailure, type ProgramIo } from './program';
export { loadConfig } from '@agentflow/core';
export { runConfigSchema, type RunConfig } from './config/schema';
export { EXIT } from './exit-codes';
