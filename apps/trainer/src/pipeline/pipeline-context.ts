import { join, resolve } from 'node:path';
import { type LanguageModel, type RunDirectory, type RunEventListener, writeFileAtomic } from '@agentflow/core';
import { type CrossTaskMemory, openCrossTaskMemory } from '@agentflow/flow';
import { type ConfiguredTaskSource, openConfiguredTaskSource, type SplitLeakageRecord, type TaskSource, type TaskSourceTools } from '@agentflow/eval';
import { createConfiguredToolSet, type ToolSet } from '@agentflow/executor';
import { createChatModel } from '@agentflow/llm';
import { resolveDevice } from '@agentflow/tensor';
import type { RunConfig } from '../config/schema';

/** What every stage shares. No stage knows which kind of task source it runs on. */
export interface PipelineContext {
  config: RunConfig;
  run: RunDirectory;
  /** The tasks, after the leakage guard (with `onLeakage: drop`, without the leaked training items). */
  source: TaskSource;
  /** The warm start's teacher and the preset planner, where the source has them. */
  configured: ConfiguredTaskSource;
  /** What the train/test check found; also in `leakage.json` and `summary.json`. */
  leakage: SplitLeakageRecord;
  /** The source's tools, then those of the config's `tools` block (web search, Wikipedia, MCP servers); `dispose` closes all. */
  tools: TaskSourceTools;
  /** The fixed verifier and generator's model, when `fixedModules` names one. */
  fixedModel: LanguageModel | undefined;
  /** Solved training tasks shown to the planner as examples, when `memory.crossTask` is set. */
  crossTask: CrossTaskMemory | undefined;
  /** The planner's base model folder: the config's `policy.model.path`, or the preset planner the warm start creates. */
  policyDir: string;
  emit: RunEventListener;
}

/**
 * `device: auto` resolved once for the whole run (tensor's resolveDevice): every stage opens
 * its own ONNX Runtime sessions, and each would otherwise try CUDA and log its own fallback line.
 */
function resolveRunDevice(device: RunConfig['device'], emit: RunEventListener): RunConfig['device'] {
  const resolution = resolveDevice(device);
  if (resolution.fallbackReason !== undefined) {
    emit({ type: 'log', level: 'info', message: `device auto: running on the CPU: ${resolution.fallbackReason}` });
  }
  return resolution.device;
}

/** A config's task source after the leakage guard, with what the guard found and the world's planner (eval's `openConfiguredTaskSource`). */
export type GuardedTaskSource = ConfiguredTaskSource;

/** The task source of the config with the leakage guard applied: a leak is refused (DATA_LEAKAGE) or dropped. */
export function guardedTaskSource(config: RunConfig): GuardedTaskSource {
  return openConfiguredTaskSource(config.task, { seed: config.seed });
}

/** Where the leakage check's record goes in a run directory. */
export const leakagePath = (run: RunDirectory) => join(run.root, 'leakage.json');

/** Builds the context of a run: the task source (leakage checked first), its tools, the fixed modules' model. */
export async function createPipelineContext(
  config: RunConfig,
  run: RunDirectory,
  emit: RunEventListener,
  guarded: GuardedTaskSource = guardedTaskSource(config),
): Promise<PipelineContext> {
  const { source, leakage } = guarded;
  writeFileAtomic(leakagePath(run), `${JSON.stringify(leakage, null, 2)}\n`);
  if (leakage.dropped.length > 0) {
    emit({
      type: 'log',
      level: 'warn',
      message: `leakage: dropped ${leakage.dropped.length} training item(s) that near-duplicate test items: ${leakage.dropped.slice(0, 10).join(', ')}${leakage.dropped.length > 10 ? ', ...' : ''}`,
    });
  }
  const sourceTools = source.createTools({ pythonSlots: 8 });
  let extraTools: ToolSet;
  try {
    extraTools = await createConfiguredToolSet(config.tools, {
      warn: (text) => emit({ type: 'log', level: 'warn', message: text.trim() }),
      alongside: [{ label: `the task source's tools (${config.task.kind})`, remedy: "leave that tool out of the config's tools", tools: sourceTools.tools }],
    });
  } catch (error) {
    await sourceTools.dispose();
    throw error;
  }
  return {
    config: { ...config, device: resolveRunDevice(config.device, emit) },
    run,
    source,
    configured: guarded,
    leakage,
    tools: {
      tools: [...sourceTools.tools, ...extraTools.tools],
      unavailableReason: sourceTools.unavailableReason,
      dispose: async () => {
        await Promise.allSettled([sourceTools.dispose(), extraTools.close()]);
      },
    },
    fixedModel: config.fixedModules ? createChatModel(config.fixedModules) : undefined,
    crossTask: await openCrossTaskMemory(config.memory, { defaultSqlitePath: join(run.root, 'memory.sqlite') }),
    policyDir: 'path' in config.policy.model ? resolve(config.policy.model.path) : join(run.root, 'models', 'policy'),
    emit,
  };
}
