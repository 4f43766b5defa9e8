import type { LanguageModel, Tool, Trajectory } from '@agentflow/core';
import { type CrossTaskMemory, createAgent } from '@agentflow/flow';
import { createCompactPromptTemplate, createFullPromptTemplate } from '@agentflow/planner';
import { createPlannerModel, endpointModelOf, parseEndpointSpec } from '../solve/cli-models';
import type { EvalConnection, EvalSettings } from './eval-settings';

/** One run to make: the question, the ids to record and the sampling seed. */
export interface EvalRun {
  question: string;
  itemId: string;
  trajectoryId: string;
  seed: number;
}

export interface EvalAgent {
  run(job: EvalRun, signal: AbortSignal): Promise<Trajectory>;
  release(): Promise<void>;
}

export interface EvalAgentSettings {
  settings: EvalSettings;
  connection: EvalConnection;
  tools: readonly Tool[];
  /** `--memory`: each run's prompt gets the solved examples most like its question, from other items. */
  memory?: CrossTaskMemory;
  /**
   * Told when a model call fails for good (after the transport's retries), not when a run's
   * own deadline cut it: the runs of a failing endpoint say nothing about the planner.
   */
  onModelFailure: (role: 'planner' | 'fixed modules', error: unknown) => void;
}

function watched(model: LanguageModel, onFailure: (error: unknown) => void): LanguageModel {
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    async chat(request) {
      try {
        return await model.chat(request);
      } catch (error) {
        if (!request.signal?.aborted) onFailure(error);
        throw error;
      }
    },
  };
}

/**
 * The agent an eval runs (flow's `createAgent`): the planner of `--planner` (one repair call
 * after an unparsable reply, as `agentflow solve` makes), the rule verifier with the fixed
 * modules' verdict after tool steps when `--fixed-modules` is set, and the finish input as
 * the answer, else the fixed generator's. Unlike `createRunAgent`, actions are not tied to
 * tools for the local grammar and repairs are made (right for RL rollouts, not for HTTP
 * servers and an eval).
 */
export async function createEvalAgent(agentSettings: EvalAgentSettings): Promise<EvalAgent> {
  const { settings, connection, tools } = agentSettings;
  // The fixed modules first: a missing API key fails here, before a local planner is loaded.
  const fixed = settings.fixedModules
    ? watched(endpointModelOf(parseEndpointSpec('--fixed-modules', settings.fixedModules), connection), (error) =>
        agentSettings.onModelFailure('fixed modules', error),
      )
    : undefined;
  const planner = await createPlannerModel(settings.planner, connection);
  const agent = createAgent({
    model: watched(planner.model, (error) => agentSettings.onModelFailure('planner', error)),
    tools,
    template: settings.template === 'compact' ? createCompactPromptTemplate() : createFullPromptTemplate(),
    actionSchemaStyle: planner.actionSchemaStyle,
    temperature: settings.temperature,
    maxTokens: settings.maxTokens,
    fixedModules: { verifierModel: fixed, generatorModel: fixed },
    maxSteps: settings.maxSteps,
    timeLimitMs: settings.timeLimitS * 1000,
    memory: agentSettings.memory,
  });
  return {
    run: (job, signal) =>
      agent.run(job.question, {
        seed: job.seed,
        signal,
        taskId: job.itemId,
        // Not the item's own records: its other samples must not see its solution.
        excludeTaskId: job.itemId,
        trajectoryId: job.trajectoryId,
        // The python REPL is per run: samples of one item must not share variables.
        toolTaskId: job.trajectoryId,
      }),
    release: () => planner.release(),
  };
}
