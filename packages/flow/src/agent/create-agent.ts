import { AgentFlowError, describeValue, type LanguageModel, type RunEventListener, type Trajectory } from '@agentflow/core';
import { type ActionSchemaStyle, createPlanner, type Planner, type PromptTemplate } from '@agentflow/planner';
import { createVerifier, type Verifier } from '@agentflow/verifier';
import type { CrossTaskMemory } from '../cross-task/cross-task-memory';
import { createGenerator, type Generator } from '../generator/generator';
import { runFlow } from '../loop/run-flow';
import type { FlowToolSource } from '../tools/flow-tools';

/** The modules that are not trained. Without any: the rule verifier alone, and the finish input as the answer. */
export interface AgentFixedModules {
  /** Asked after each tool step the rules let continue whether the task is done (the LLM verdict). Default: rules only. */
  verifierModel?: LanguageModel;
  /** Writes the answer from memory when the run ends without a (non-blank) finish input. Default: none, the answer is then null. */
  generatorModel?: LanguageModel;
}

/**
 * Everything an agent is made of. Tools come as core `Tool`s (`tools`, wrapped in a fresh
 * executor registry per run) or as a prepared `@agentflow/executor` `registry` (the caller
 * disposes it); the planner's catalogue is the same tools.
 */
export interface AgentSettings extends FlowToolSource {
  /** The planner's model: the one module that is trained. */
  model: LanguageModel;
  /** The planner's prompt. Default: `createFullPromptTemplate()` (LLMs); the compact one for a tiny local policy. */
  template?: PromptTemplate;
  /** `flat` (default; any back end) or `tied` (one union branch per tool; grammar-constrained local policies). */
  actionSchemaStyle?: ActionSchemaStyle;
  /** Repair calls after an unparsable planner reply (default 1, the planner's; 0 for RL rollouts, where a repair is off-policy). */
  maxRepairs?: number;
  /** The planner's sampling temperature (default: the model's). */
  temperature?: number;
  /** Completion token limit of one planner decision (default 512, the planner's). */
  maxTokens?: number;
  fixedModules?: AgentFixedModules;
  /** Planner steps per run, also the verifier's rule (default 10, the verifier's). */
  maxSteps?: number;
  /** Wall-clock budget of one run in milliseconds, also the verifier's rule (default 300 000, the verifier's). */
  timeLimitMs?: number;
  /** Cross-task memory: before each run, the most similar solved tasks are shown to the planner as examples. */
  memory?: CrossTaskMemory;
}

/** What differs between runs of one agent. */
export interface AgentRunSettings {
  /** Seeds the planner's sampling (each decision adds its step index). Default: unseeded. */
  seed?: number;
  /** The task's id in its data set; recorded on the trajectory. */
  taskId?: string;
  /** Default: a random UUID. */
  trajectoryId?: string;
  /** Key of per-task tool state (the python REPL). Default: `taskId`, else the trajectory id. */
  toolTaskId?: string;
  /** Cancels the run; one that aborts with a TIMEOUT reason ends it as a timeout. */
  signal?: AbortSignal;
  listener?: RunEventListener;
  /** Leaves that task's records out of the cross-task examples (an evaluation's other samples of one item). */
  excludeTaskId?: string;
  /**
   * This run's step budget, e.g. its task's own (eval's `TaskItem.maxSteps`): the run stops after
   * the smaller of it and the agent's `limits.maxSteps`, without an answer unless it finished.
   * A positive integer. Default: the agent's limit.
   */
  maxSteps?: number;
}

/** An assembled agent: its modules, for callers that drive the loop themselves (`createFlowCompleter`), and `run`. */
export interface Agent {
  /** A planner over the agent's model and tools, with this sampling seed. */
  planner(seed?: number): Planner;
  readonly verifier: Verifier;
  readonly generator: Generator;
  /** The step and time limits every run gets (the verifier's); a run's own `maxSteps` can only lower the step limit. */
  readonly limits: { maxSteps: number; timeLimitMs: number };
  /** Runs the loop on `question`; never throws for a failure inside the run (see `runFlow`). */
  run(question: string, settings?: AgentRunSettings): Promise<Trajectory>;
}

/**
 * The one agent assembly of run, eval and solve: a planner over `model` and the tools, the
 * rule verifier (with the fixed verifier model's verdict when set), the generator (the
 * finish input as the answer, else the fixed generator model's), and the cross-task
 * examples, run by `runFlow` under one step and time limit. Invalid limits throw the
 * verifier's `INVALID_CONFIG` error here, before any run.
 */
export function createAgent(settings: AgentSettings): Agent {
  const { verifierModel, generatorModel } = settings.fixedModules ?? {};
  const verifier = createVerifier({
    rules: {
      ...(settings.maxSteps === undefined ? {} : { maxSteps: settings.maxSteps }),
      ...(settings.timeLimitMs === undefined ? {} : { timeLimitMs: settings.timeLimitMs }),
    },
    ...(verifierModel ? { llm: { model: verifierModel } } : {}),
  });
  const generator = createGenerator({ useFinishInput: true, ...(generatorModel ? { model: generatorModel } : {}) });
  const limits = { maxSteps: verifier.maxSteps, timeLimitMs: verifier.timeLimitMs };
  const toolSource: FlowToolSource = settings.registry ? { registry: settings.registry } : { tools: settings.tools ?? [] };
  const planner = (seed?: number) =>
    createPlanner({
      model: settings.model,
      // A registry's tools are read per planner: tools registered after createAgent are offered too.
      tools: settings.registry ? settings.registry.list() : (settings.tools ?? []),
      ...(settings.template ? { template: settings.template } : {}),
      ...(settings.actionSchemaStyle ? { actionSchemaStyle: settings.actionSchemaStyle } : {}),
      ...(settings.maxRepairs === undefined ? {} : { maxRepairs: settings.maxRepairs }),
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
      ...(settings.maxTokens === undefined ? {} : { maxTokens: settings.maxTokens }),
      ...(seed === undefined ? {} : { seed }),
    });
  return {
    planner,
    verifier,
    generator,
    limits,
    async run(question, run = {}) {
      if (run.maxSteps !== undefined && !(Number.isInteger(run.maxSteps) && run.maxSteps > 0)) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `A run's maxSteps must be a positive integer, got ${describeValue(run.maxSteps)}${run.taskId === undefined ? '' : ` (task ${run.taskId})`}.`,
          details: { maxSteps: run.maxSteps },
        });
      }
      const { memory } = settings;
      const examples = !memory
        ? ''
        : run.excludeTaskId === undefined
          ? await memory.examplesFor(question)
          : await memory.examplesFor(question, { excludeTaskId: run.excludeTaskId });
      return runFlow(
        question,
        {
          planner: planner(run.seed),
          ...toolSource,
          verifier,
          generator,
          ...(examples ? { examples } : {}),
          ...(run.listener ? { listener: run.listener } : {}),
        },
        {
          ...limits,
          ...(run.maxSteps === undefined ? {} : { maxSteps: Math.min(run.maxSteps, limits.maxSteps) }),
          ...(run.signal ? { signal: run.signal } : {}),
          ...(run.taskId === undefined ? {} : { taskId: run.taskId }),
          ...(run.trajectoryId === undefined ? {} : { trajectoryId: run.trajectoryId }),
          ...(run.toolTaskId === undefined ? {} : { toolTaskId: run.toolTaskId }),
        },
      );
    },
  };
}
