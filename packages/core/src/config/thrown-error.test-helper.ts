import { AgentFlowError } from '../errors/agentflow-error';

/** Test support: the AgentFlowError that `run` throws (anything else thrown, or nothing, fails the test). */
export function thrownAgentFlowError(run: () => unknown): AgentFlowError {
  try {
    run();
  } catch (error) {
    if (AgentFlowError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an AgentFlowError');
}
