import { AgentFlowError } from '@agentflow/core';

/** What each subcommand does and which issue builds it, while it is not built yet. */
export function notImplemented(command: string, issue: number): never {
  throw new AgentFlowError({
    code: 'NOT_IMPLEMENTED',
    message: `agentflow ${command} is not implemented yet (tracked in issue #${issue}).`,
    details: { command, issue },
  });
}
