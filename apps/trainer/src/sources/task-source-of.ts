import { resolve } from 'node:path';
import { assertNever } from '@agentflow/core';
import { createDatasetTaskSource, createTaskWorld, createWorldPlannerFolder, createWorldTaskSource, type TaskSource, type WorldPlannerSample } from '@agentflow/eval';
import type { RunConfig } from '../config/schema';
import type { DatasetsTaskConfig } from '../config/task-schema';

/** What the pipeline needs from the task block of a config. */
export interface ConfiguredTaskSource {
  /** The tasks, with the warm start's teacher as `demonstration` where the source has one. */
  source: TaskSource;
  /**
   * Creates a preset planner in `dir` from the warm start's samples (the world learns its
   * tokenizer from them); undefined when the config's planner must come from a folder.
   */
  createPresetPlanner?(dir: string, samples: readonly WorldPlannerSample[], seed: number): Promise<void>;
}

/** A dataset file as @agentflow/eval reads it; relative paths from the working directory. */
function datasetOf(source: DatasetsTaskConfig['train']) {
  return {
    path: resolve(source.path),
    format: source.format,
    ...(source.years ? { years: source.years } : {}),
    ...(source.limit === undefined ? {} : { limit: source.limit }),
    ...(source.fields ? { fields: source.fields } : {}),
  };
}

/** The task source of `config.task` (the world's with the configured teacher, drawing with the run's seed), and its preset planner where it has one. */
export function configuredTaskSource(config: RunConfig): ConfiguredTaskSource {
  const task = config.task;
  switch (task.kind) {
    case 'world': {
      const world = createTaskWorld({
        seed: task.seed,
        entities: task.entities,
        trainTasks: task.trainTasks,
        testTasks: task.testTasks,
        levels: task.levels as Array<1 | 2 | 3>,
        maxValue: task.maxValue,
      });
      return {
        source: createWorldTaskSource(world, { teacher: { errorRate: task.teacher.errorRate, mistakes: task.teacher.mistakes, seed: config.seed } }),
        createPresetPlanner: (dir, samples, seed) => createWorldPlannerFolder(dir, samples, task.planner, seed),
      };
    }
    case 'datasets':
      // Benchmark files have no demonstrations: the warm start leaves the planner as it is.
      return { source: createDatasetTaskSource({ train: datasetOf(task.train), test: datasetOf(task.test) }) };
    default:
      return assertNever(task, 'task kind');
  }
}
