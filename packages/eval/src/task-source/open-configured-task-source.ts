import { resolve } from 'node:path';
import { assertNever } from '@agentflow/core';
import type { DatasetSource } from '../datasets/load-dataset';
import { createTaskWorld } from '../task-world/create-task-world';
import { createWorldPlannerFolder, type WorldPlannerSample } from '../task-world/world-planner';
import { createDatasetTaskSource } from './dataset-task-source';
import { checkSplitLeakage, type SplitLeakageRecord } from './split-leakage';
import type { TaskSource } from './task-source';
import type { DatasetFileSettings, TaskSourceSettings } from './task-source-settings';
import { createWorldTaskSource } from './world-task-source';

/** The task source of a task settings block after its leakage guard, and the world's planner where it has one. */
export interface ConfiguredTaskSource {
  /**
   * The tasks after the leakage guard (with `onLeakage: 'drop'`, without the leaked training
   * items), with the warm start's teacher as `demonstration` where the source has one.
   */
  source: TaskSource;
  /** What the leakage guard (`checkSplitLeakage`) found and did. */
  leakage: SplitLeakageRecord;
  /**
   * Creates the world's random planner in `dir` from the warm start's samples (the world learns
   * its tokenizer from them; `createWorldPlannerFolder` at the settings' `planner` shape);
   * undefined when the planner must come from a folder (benchmark files).
   */
  createPresetPlanner?(dir: string, samples: readonly WorldPlannerSample[], seed: number): Promise<void>;
}

/** Settings of {@link openConfiguredTaskSource}. */
export interface OpenConfiguredTaskSourceSettings {
  /** Seeds the imperfect teacher's draws (`WorldTaskSourceTeacher.seed`): a run's seed. */
  seed: number;
}

/** A dataset file as `loadDataset` reads it; relative paths from the working directory. */
function datasetOf(source: DatasetFileSettings): DatasetSource {
  return {
    path: resolve(source.path),
    format: source.format,
    ...(source.years ? { years: source.years } : {}),
    ...(source.limit === undefined ? {} : { limit: source.limit }),
    ...(source.fields ? { fields: source.fields } : {}),
  };
}

/**
 * The task source of parsed task settings (`taskSourceSettingsSchema`): the generated world's
 * (`createTaskWorld` with its recoverable mistakes where set, its items then carrying
 * `maxSteps`; `createWorldTaskSource` with the settings' teacher drawing from `seed`),
 * with its planner (`createWorldPlannerFolder`), or that of two benchmark files
 * (`createDatasetTaskSource`), which have no demonstrations and no planner of their own; then
 * the settings' leakage guard (`checkSplitLeakage`): a leak throws DATA_LEAKAGE or is dropped.
 */
export function openConfiguredTaskSource(task: TaskSourceSettings, settings: OpenConfiguredTaskSourceSettings): ConfiguredTaskSource {
  const { source, createPresetPlanner } = unguardedSource(task, settings);
  const guarded = checkSplitLeakage(source, { threshold: task.leakageThreshold, onLeak: task.onLeakage });
  return { source: guarded.source, leakage: guarded.record, ...(createPresetPlanner ? { createPresetPlanner } : {}) };
}

function unguardedSource(task: TaskSourceSettings, settings: OpenConfiguredTaskSourceSettings): Omit<ConfiguredTaskSource, 'leakage'> {
  switch (task.kind) {
    case 'world': {
      const world = createTaskWorld({
        seed: task.seed,
        entities: task.entities,
        trainTasks: task.trainTasks,
        testTasks: task.testTasks,
        levels: task.levels as Array<1 | 2 | 3>,
        maxValue: task.maxValue,
        ...(task.decoyRate ? { decoyRate: task.decoyRate } : {}),
        ...(task.stepSlack === undefined || task.stepSlack === null ? {} : { stepSlack: task.stepSlack }),
      });
      const { errorRate, mistakes, recoveryRate, recoveries } = task.teacher;
      const teacher = {
        errorRate,
        mistakes,
        ...(recoveryRate === undefined ? {} : { recoveryRate }),
        ...(recoveries ? { recoveries } : {}),
        seed: settings.seed,
      };
      return {
        source: createWorldTaskSource(world, { teacher }),
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
