import { join } from 'node:path';
import { AgentFlowError, type RunEventListener } from '@agentflow/core';
import { createTaskWorld, type TaskWorld } from '@agentflow/eval';
import { findCudaProviderLibrary } from '@agentflow/tensor';
import type { RunConfig } from '../config/schema';
import type { RunDirectory } from '../pipeline/run-directory';
import { createWorldTools, type WorldTools } from './world-tools';

export type WorldTaskConfig = Extract<RunConfig['task'], { kind: 'world' }>;

/** What every stage of the embedded default shares. */
export interface WorldContext {
  config: RunConfig;
  task: WorldTaskConfig;
  run: RunDirectory;
  world: TaskWorld;
  tools: WorldTools;
  /** The random planner's model folder (created by the warm-start stage). */
  policyDir: string;
  emit: RunEventListener;
}

/**
 * `device: auto` resolved once for the whole run: every stage opens its own ONNX Runtime
 * sessions, and each would otherwise try CUDA and log its own fallback line.
 */
function resolveDevice(device: RunConfig['device'], emit: RunEventListener): RunConfig['device'] {
  if (device !== 'auto' || findCudaProviderLibrary() !== undefined) return device;
  emit({
    type: 'log',
    level: 'info',
    message: 'device auto: the CUDA provider of onnxruntime-node is not installed (pnpm gpu:setup installs it); running on the CPU.',
  });
  return 'cpu';
}

export function createWorldContext(config: RunConfig, run: RunDirectory, emit: RunEventListener): WorldContext {
  if (config.task.kind !== 'world') {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `createWorldContext needs task.kind "world", got "${config.task.kind}".` });
  }
  const task = config.task;
  config = { ...config, device: resolveDevice(config.device, emit) };
  const world = createTaskWorld({
    seed: task.seed,
    entities: task.entities,
    trainTasks: task.trainTasks,
    testTasks: task.testTasks,
    levels: task.levels as Array<1 | 2 | 3>,
    maxValue: task.maxValue,
  });
  return {
    config,
    task,
    run,
    world,
    tools: createWorldTools(world, { pythonSlots: 8 }),
    policyDir: join(run.root, 'models', 'policy'),
    emit,
  };
}

/** Stage checkpoints of the planner, in the order the pipeline writes them. */
export const POLICY_CHECKPOINTS = { warm: 'policy-warm', final: 'policy-final', dapo: 'dapo' } as const;

/**
 * The warm-started planner with its adapter merged, as a plain model folder: the PRM's
 * backbone, and the base of DAPO's adapter when `train.lora` is set.
 */
export function warmPlannerDir(context: Pick<WorldContext, 'run'>): string {
  return join(context.run.root, 'models', 'planner-warm');
}

