import { AgentFlowError, type LanguageModel, type Tool, type Trajectory } from '@agentflow/core';
import { type CrossTaskMemory, createAgent } from '@agentflow/flow';
import { type ActionSchemaStyle, createCompactPromptTemplate, createFullPromptTemplate } from '@agentflow/planner';
import type { BenchmarkEvalSettings } from './benchmark-eval-settings';

/** The models of one eval, opened by the caller from the names in the settings (`planner`, `fixedModules`). */
export interface BenchmarkEvalModels {
  /** The planner's model, sampled at the settings' temperature. */
  planner: LanguageModel;
  /** How the planner is asked for an action: `flat` for HTTP servers (their JSON schema stops short of a root union), `tied` for a local grammar. */
  actionSchemaStyle: ActionSchemaStyle;
  /** The fixed verifier and generator; present exactly when the settings name `fixedModules`. */
  fixedModules?: LanguageModel;
  /** The LLM judge scoring each run beside the rule checker; present exactly when the settings name `judge`. */
  judge?: LanguageModel;
  /** Frees what the models hold (a local policy's sessions), once the runs are done. */
  release?: () => Promise<void>;
}

/** One run to make: the question, the ids to record and the sampling seed. */
export interface BenchmarkEvalRun {
  question: string;
  itemId: string;
  trajectoryId: string;
  seed: number;
}

/** The agent of an eval: one run per call; `release` frees the models. */
export interface BenchmarkEvalAgent {
  run(job: BenchmarkEvalRun, signal: AbortSignal): Promise<Trajectory>;
  release(): Promise<void>;
}

export interface BenchmarkEvalAgentSettings {
  settings: BenchmarkEvalSettings;
  models: BenchmarkEvalModels;
  tools: readonly Tool[];
  /** Each run's prompt gets the solved examples most like its question, from other items. */
  memory?: CrossTaskMemory;
  /**
   * Told when a model call fails for good (after the transport's retries), not when a run's
   * own deadline cut it: the runs of a failing endpoint say nothing about the planner.
   */
  onModelFailure: (role: 'planner' | 'fixed modules', error: unknown) => void;
}

/** `model` telling `onFailure` of a call that failed for good, unless the caller's own signal cut it. */
export function watched(model: LanguageModel, onFailure: (error: unknown) => void): LanguageModel {
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
 * The agent an eval runs (flow's `createAgent`): the planner with one repair call after an
 * unparsable reply (as `agentflow solve` makes; RL rollouts make none, a repair being
 * off-policy), the rule verifier with the fixed modules' verdict after tool steps when they
 * are set, and the finish input as the answer, else the fixed generator's.
 */
export function createBenchmarkEvalAgent(agentSettings: BenchmarkEvalAgentSettings): BenchmarkEvalAgent {
  const { settings, models, tools } = agentSettings;
  if ((settings.fixedModules === null) !== (models.fixedModules === undefined)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The settings name fixedModules ${JSON.stringify(settings.fixedModules)} but the models ${models.fixedModules ? 'have' : 'lack'} a fixed model; open one exactly when fixedModules is set.`,
      details: { fixedModules: settings.fixedModules },
    });
  }
  const fixed = models.fixedModules ? watched(models.fixedModules, (error) => agentSettings.onModelFailure('fixed modules', error)) : undefined;
  const agent = createAgent({
    model: watched(models.planner, (error) => agentSettings.onModelFailure('planner', error)),
    tools,
    template: settings.template === 'compact' ? createCompactPromptTemplate() : createFullPromptTemplate(),
    actionSchemaStyle: models.actionSchemaStyle,
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
    release: async () => {
      await models.release?.();
    },
  };
}
