import { AgentFlowError, describeValue, type Tool } from '@agentflow/core';
import { createCorpusSearchTool } from '@agentflow/executor';
import type { TaskWorld } from '../task-world/create-task-world';
import { createPooledPythonTool, DEFAULT_PYTHON_SLOTS } from './pooled-python-tool';
import type { TaskItem, TaskSource, TaskSplitName } from './task-source';

/** Settings of `createWorldTaskSource`. */
export interface WorldTaskSourceSettings {
  /** A label put before the generated description in logs. */
  name?: string;
}

/** The task world as a task source, with the world itself for what only it has (its corpus, its files). */
export type WorldTaskSource = TaskSource & { readonly world: TaskWorld };

/**
 * The generated task world (`createTaskWorld`) as a task source: its splits, its answer
 * checker as the reward, its expert demonstrations, and the tools its tasks need, built as
 * the trainer has built them (BM25 `corpus_search` over the world's corpus showing the top
 * hit's title and text, then the pooled python REPL with slot ids `world-python-<n>`).
 */
export function createWorldTaskSource(world: TaskWorld, settings: WorldTaskSourceSettings = {}): WorldTaskSource {
  const toItem = (task: ReturnType<TaskWorld['task']>): TaskItem => ({
    id: task.id,
    question: task.question,
    answer: task.answer,
    metadata: { level: task.level, template: task.template, entities: [...task.entities] },
  });
  const splits: Record<TaskSplitName, readonly TaskItem[]> = {
    train: Object.freeze(world.split('train').map(toItem)),
    test: Object.freeze(world.split('test').map(toItem)),
  };
  const items = new Map([...splits.train, ...splits.test].map((item) => [item.id, item]));
  const { seed, trainTasks, testTasks, levels, entities } = world.settings;
  const generated = `task world seed ${seed} (${trainTasks} train / ${testTasks} test tasks, levels ${levels.join(', ')}, ${entities} entities)`;

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
    demonstration: (item) => world.demonstration(item.id).steps.map((step) => step.action),
    // Questions of one template read alike whatever their entities: a task is its template and entities.
    leakageKey: (item) => `${String(item.metadata.template)}:${(item.metadata.entities as string[]).join(',')}`,
  };
}
