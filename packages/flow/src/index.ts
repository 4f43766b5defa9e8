/** @agentflow/flow: the agent loop, planner -> executor -> verifier -> generator. */

/**
 * The one agent assembly (run, eval and solve): the planner over a model and tools, the fixed
 * verifier and generator, limits and cross-task memory; `run(question)` gives a trajectory.
 */
export {
  type Agent,
  type AgentFixedModules,
  type AgentRunSettings,
  type AgentSettings,
  createAgent,
} from './agent/create-agent';
/** Runs one question through the loop and returns its trajectory. */
export { runFlow, type FlowLimits, type FlowModules } from './loop/run-flow';
/** Continues a trajectory after one of its steps: the prefix verbatim, then the current planner. */
export { continueFlow, trajectoryPrefix, type ContinueFlowLimits } from './loop/continue-flow';
/** The `complete(prefix, n, random)` of Monte-Carlo step labelling (`@agentflow/prm`), over continueFlow. */
export {
  createFlowCompleter,
  type FlowCompleter,
  type FlowCompleterSettings,
  type FlowCompletionContext,
  type FlowCompletionPrefix,
} from './completion/flow-completer';
/** How a stopping verdict maps to a trajectory termination. */
export { terminationOf } from './loop/termination';
/** Where a run's tools come from: core `Tool`s or an `@agentflow/executor` registry. */
export type { FlowToolSource } from './tools/flow-tools';
/** Writes the final answer from memory, or takes the planner's finish input. */
export {
  createGenerator,
  finishInputToAnswer,
  type Generator,
  type GeneratorInput,
  type GeneratorSettings,
} from './generator/generator';
/** A teacher's demonstrations replayed through the real loop with a scripted planner: a warm start's samples, each prompt as the planner renders it. */
export {
  type DemonstratedItem,
  type DemonstrationSample,
  type DemonstrationSource,
  demonstrationSamples,
} from './demonstrations/demonstration-samples';
/** Many agent runs, in batches of concurrent runs (evaluations, collection). */
export { type AgentJob, type RunAgentJobsSettings, runAgentJobs } from './agent/run-agent-jobs';
/** DAPO's `sampleRollouts` over the agent loop: G seeded runs of one prompt, each with its own id. */
export { createRolloutSampler, type RolloutPrompt, type RolloutSamplerSettings } from './rollouts/rollout-sampler';
/** Cross-task memory in the loop: solved tasks kept in a MemoryStore, the most similar shown to the planner as examples. */
export {
  type CrossTaskMemory,
  type CrossTaskMemorySettings,
  createCrossTaskMemory,
  renderTrajectoryForMemory,
} from './cross-task/cross-task-memory';
/** The cross-task memory block of a config (`memory:` of `agentflow run`) and its opening. */
export { type CrossTaskMemoryConfig, crossTaskMemoryConfigSchema, openCrossTaskMemory } from './cross-task/cross-task-memory-config';
