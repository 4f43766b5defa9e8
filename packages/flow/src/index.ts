/** @agentflow/flow: the agent loop, planner -> executor -> verifier -> generator. */

/** Runs one question through the loop and returns its trajectory. */
export { runFlow, type FlowLimits, type FlowModules } from './loop/run-flow';
/** How a stopping verdict maps to a trajectory termination. */
export { terminationOf } from './loop/termination';
/** Runs planner actions against core tools: validation, coercion, timeout, output cap; never throws. */
export { createToolRunner, type ToolRunContext, type ToolRunner, type ToolRunnerSettings } from './tools/tool-runner';
/** Writes the final answer from memory, or takes the planner's finish input. */
export {
  createGenerator,
  finishInputToAnswer,
  type Generator,
  type GeneratorInput,
  type GeneratorSettings,
} from './generator/generator';
