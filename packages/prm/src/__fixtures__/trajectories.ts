import type { PlannerAction, Step, Trajectory } from '@agentflow/core';

/** A step as the agent loop records it, with a tool result. */
export function makeStep(index: number, action: PlannerAction | null, toolOutput: string): Step {
  return {
    index,
    prompt: [{ role: 'user', content: `prompt of step ${index}` }],
    completion: action ? JSON.stringify(action) : '{not json',
    truncated: false,
    action,
    ...(action ? {} : { parseError: 'Unexpected token n in JSON' }),
    toolResult: { output: toolOutput, truncated: false, durationMs: 3 },
    timings: { plannerMs: 1, toolMs: 2, verifierMs: 0 },
  };
}

/** A three-step trajectory: a lookup, a format error, then a python call. Tool outputs carry markers. */
export function makeTrajectory(id = 'traj-1', outcomeReward = 1): Trajectory {
  return {
    id,
    taskId: 'task-7',
    question: 'What is the population of Lyon times 2?',
    steps: [
      makeStep(
        0,
        { thought: 'Look up Lyon first.', action: 'search', action_input: { query: 'Lyon population' } },
        'TOOL-OUTPUT-MARKER-0: Lyon has 522,250 inhabitants.',
      ),
      makeStep(1, null, 'TOOL-OUTPUT-MARKER-1: nothing ran'),
      makeStep(
        2,
        { thought: 'Double it.', action: 'python', action_input: { code: '522250 * 2' } },
        'TOOL-OUTPUT-MARKER-2: 1044500',
      ),
      makeStep(3, { thought: 'Done.', action: 'finish', action_input: '1044500' }, 'TOOL-OUTPUT-MARKER-3'),
    ],
    answer: '1044500',
    outcomeReward,
    termination: 'finished',
    startedAt: new Date(0).toISOString(),
    durationMs: 42,
  };
}
