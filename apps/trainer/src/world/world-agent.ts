import type { LanguageModel, Tool, Trajectory } from '@agentflow/core';
import { createGenerator, runFlow } from '@agentflow/flow';
import { createCompactPromptTemplate, createPlanner, type Planner } from '@agentflow/planner';
import { createVerifier, type Verifier } from '@agentflow/verifier';

export interface WorldAgentSettings {
  model: LanguageModel;
  tools: readonly Tool[];
  maxSteps: number;
  maxTokens: number;
  temperature: number;
}

/** The prompt of the tiny planner: one short message, each tool output on one line. */
const template = createCompactPromptTemplate({ maxPromptChars: 480, maxOutputChars: 120 });

/** The planner of the embedded default with one sampling seed. */
export function createWorldPlanner(settings: WorldAgentSettings, seed: number): Planner {
  return createPlanner({
    model: settings.model,
    tools: settings.tools,
    template,
    actionSchemaStyle: 'tied',
    maxRepairs: 0,
    temperature: settings.temperature,
    maxTokens: settings.maxTokens,
    seed,
  });
}

/** Rules only: finish, step limit, repeated action, tool-error streak. */
export function createWorldVerifier(settings: WorldAgentSettings): Verifier {
  return createVerifier({ rules: { maxSteps: settings.maxSteps } });
}

/**
 * Runs the agent of the embedded default on one question: the compact prompt, actions
 * constrained to the tools' schemas (`tied`: each action with its own input), no repair
 * calls (a repair would be off-policy for RL), rule verdicts, the finish input as answer.
 */
export function runWorldAgent(
  question: string,
  settings: WorldAgentSettings,
  run: { taskId: string; trajectoryId: string; seed: number },
): Promise<Trajectory> {
  return runFlow(
    question,
    {
      planner: createWorldPlanner(settings, run.seed),
      tools: settings.tools,
      verifier: createWorldVerifier(settings),
      generator: createGenerator({ useFinishInput: true }),
    },
    { maxSteps: settings.maxSteps, taskId: run.taskId, trajectoryId: run.trajectoryId, timeLimitMs: 120_000 },
  );
}
