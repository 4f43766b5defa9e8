import { AgentFlowError, createRandom, type Demonstration, describeValue, type Tool } from '@agentflow/core';
import { createCorpusSearchTool } from '@agentflow/executor';
import type { TaskWorld } from '../task-world/create-task-world';
import type { WorldTeacherRecovery } from '../task-world/world-recoveries';
import { createWorldTeacher, type WorldTeacherMistake } from '../task-world/world-teacher';
import { createPooledPythonTool, DEFAULT_PYTHON_SLOTS } from './pooled-python-tool';
import type { TaskItem, TaskSource, TaskSplitName } from './task-source';

/** The imperfect teacher whose demonstrations a world task source gives (see `createWorldTeacher`). */
export interface WorldTaskSourceTeacher {
  /** Fraction of the demonstrations that carry one mistake and answer what it leads to (0: the exact expert). */
  errorRate: number;
  /** The mistakes drawn from, one per flawed demonstration. Default `WORLD_TEACHER_MISTAKES` (operator, lookup); `decoy` asked by name. */
  mistakes?: readonly WorldTeacherMistake[];
  /** Fraction of the demonstrations that make a mistake and recover from it, answering right (`withWorldRecovery`). Default 0; with `errorRate` at most 1. */
  recoveryRate?: number;
  /** The recoveries drawn from, among those a demonstration allows. Default `WORLD_TEACHER_RECOVERIES` (decoy, python). */
  recoveries?: readonly WorldTeacherRecovery[];
  /** Seeds the teacher's draws: `createRandom(seed).fork('expert-errors')`, drawn over the training split in order, then the test split. */
  seed: number;
}

/** Settings of `createWorldTaskSource`. */
export interface WorldTaskSourceSettings {
  /** A label put before the generated description in logs. */
  name?: string;
  /** The teacher of `demonstration(item)`. Default: the world's exact expert. */
  teacher?: WorldTaskSourceTeacher;
}

/**
 * Every task's demonstration by the teacher, drawn once: the training split in order, then
 * the test split, so a demonstration does not depend on which tasks were asked for before it.
 */
function teacherDemonstrations(world: TaskWorld, teacher: WorldTaskSourceTeacher): Map<string, Demonstration> {
  if (!(teacher.errorRate >= 0 && teacher.errorRate <= 1)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `The world teacher's errorRate must be in [0, 1], got ${describeValue(teacher.errorRate)}.`,
    });
  }
  const demonstrate = createWorldTeacher(world, {
    errorRate: teacher.errorRate,
    ...(teacher.mistakes ? { mistakes: teacher.mistakes } : {}),
    ...(teacher.recoveryRate === undefined ? {} : { recoveryRate: teacher.recoveryRate }),
    ...(teacher.recoveries ? { recoveries: teacher.recoveries } : {}),
    random: createRandom(teacher.seed).fork('expert-errors'),
  });
  return new Map([...world.split('train'), ...world.split('test')].map((task) => [task.id, demonstrate(task.id)]));
}

/** The task world as a task source, with the world itself for what only it has (its corpus, its files). */
export type WorldTaskSource = TaskSource & { readonly world: TaskWorld };

/**
 * The generated task world (`createTaskWorld`) as a task source: its splits (each item with
 * its task's `maxSteps` when the world has `stepSlack`), its answer checker as the reward,
 * its demonstrations (the exact expert's, or with `teacher` an imperfect teacher's, which can
 * recover from mistakes), and the tools its tasks need, built as
 * the trainer has built them (BM25 `corpus_search` over the world's corpus showing the top
 * hit's title and text, then the pooled python REPL with slot ids `world-python-<n>`).
 */
export function createWorldTaskSource(world: TaskWorld, settings: WorldTaskSourceSettings = {}): WorldTaskSource {
  const toItem = (task: ReturnType<TaskWorld['task']>): TaskItem => ({
    id: task.id,
    question: task.question,
    answer: task.answer,
    metadata: { level: task.level, template: task.template, entities: [...task.entities] },
    ...(task.maxSteps === undefined ? {} : { maxSteps: task.maxSteps }),
  });
  const splits: Record<TaskSplitName, readonly TaskItem[]> = {
    train: Object.freeze(world.split('train').map(toItem)),
    test: Object.freeze(world.split('test').map(toItem)),
  };
  const items = new Map([...splits.train, ...splits.test].map((item) => [item.id, item]));
  const { seed, trainTasks, testTasks, levels, entities, decoyRate, stepSlack } = world.settings;
  // Recoverable mistakes are named only when set: the default world's description stays as it was.
  const mistakes = [
    ...(decoyRate === undefined ? [] : [`decoy rate ${decoyRate}`]),
    ...(stepSlack === undefined ? [] : [`step slack ${stepSlack}`]),
  ].map((part) => `, ${part}`);
  const generated = `task world seed ${seed} (${trainTasks} train / ${testTasks} test tasks, levels ${levels.join(', ')}, ${entities} entities${mistakes.join('')})`;
  const exact = (id: string): Demonstration => ({ actions: world.demonstration(id).steps.map((step) => step.action), exact: true });
  let taught: Map<string, Demonstration> | undefined;

  return {
    kind: 'world',
    description: settings.name ? `${settings.name}: ${generated}` : generated,
    world,
    split: (name) => splits[name],
    item(id) {
      const item = items.get(id);
      if (!item) {
        throw new AgentFlowError({
          code: 'NOT_FOUND',
          message: `No task ${describeValue(id)} in this task world (ids are train-0..train-${trainTasks - 1}, test-0..test-${testTasks - 1}).`,
          details: { id },
        });
      }
      return item;
    },
    // The world's checker never throws on a response; an unknown id is NOT_FOUND.
    reward: async (item, answer) => (world.checkAnswer(item.id, answer) ? 1 : 0),
    createTools(toolSettings = {}) {
      const corpus = createCorpusSearchTool({ documents: world.corpus, defaultK: 1, maxTextChars: 120, hitHeader: 'title' });
      const python = createPooledPythonTool({ slots: toolSettings.pythonSlots ?? DEFAULT_PYTHON_SLOTS, slotPrefix: 'world-python-' });
      return { tools: [corpus as Tool, python.tool], unavailableReason: python.unavailableReason, dispose: python.dispose };
    },
    demonstration(item) {
      if (!settings.teacher) return exact(item.id);
      taught ??= teacherDemonstrations(world, settings.teacher);
      return taught.get(item.id) ?? exact(item.id);
    },
    // Questions of one template read alike whatever their entities: a task is its template and entities.
    leakageKey: (item) => `${String(item.metadata.template)}:${(item.metadata.entities as string[]).join(',')}`,
  };
}
