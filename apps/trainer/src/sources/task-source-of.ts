import { resolve } from 'node:path';
import { assertNever, createRandom, type PlannerAction } from '@agentflow/core';
import {
  createDatasetTaskSource,
  createTaskWorld,
  createWorldPlannerFolder,
  createWorldTaskSource,
  createWorldTeacher,
  type TaskItem,
  type TaskSource,
  type WorldPlannerSample,
} from '@agentflow/eval';
import type { RunConfig } from '../config/schema';
import type { DatasetsTaskConfig } from '../config/task-schema';

/** One demonstration the warm start learns from: the actions, and whether they are meant to be right. */
export interface Demonstration {
  actions: PlannerAction[];
  /** True for an exact expert: its replay must reach the reference answer, or the source and its tools disagree. */
  exact: boolean;
}

/** What the pipeline needs from the task block of a config. */
export interface ConfiguredTaskSource {
  source: TaskSource;
  /**
   * The teacher of the warm start, asked in the order of the training split; undefined when
   * the source has no demonstrations.
   */
  createTeacher?(seed: number): (item: TaskItem) => Demonstration | undefined;
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

/** The task source of `config.task`, with its teacher and preset planner where it has them. */
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
        source: createWorldTaskSource(world),
        createTeacher(seed) {
          const teacher = createWorldTeacher(world, {
            errorRate: task.teacher.errorRate,
            mistakes: task.teacher.mistakes,
            random: createRandom(seed).fork('expert-errors'),
          });
          return (item) => teacher(item.id);
        },
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
