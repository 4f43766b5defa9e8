import { basename } from 'node:path';
import { AgentFlowError, describeValue } from '@agentflow/core';
import { answerFormatFor, createAnswerChecker } from '../answers/check-answer';
import type { SympyEquivalence } from '../answers/sympy-equivalence';
import type { BenchmarkItem } from '../datasets/benchmark-item';
import { type DatasetSource, loadDataset } from '../datasets/load-dataset';
import { createPooledPythonTool, DEFAULT_PYTHON_SLOTS } from './pooled-python-tool';
import type { TaskItem, TaskSource, TaskSplitName } from './task-source';

/** Settings of `createDatasetTaskSource`. */
export interface DatasetTaskSourceSettings {
  /** The file the run trains on (e.g. the AIME CSV, years 1983-2023). */
  train: DatasetSource;
  /** The file the run is judged on (e.g. aime24.json). */
  test: DatasetSource;
  /**
   * Symbolic equivalence for answers that rules cannot decide. The caller owns it. Omitted
   * by default: AIME answers are integers, which the rules decide.
   */
  sympy?: SympyEquivalence;
  /** A label put before the generated description in logs, e.g. `aime`. */
  name?: string;
}

/** `aime_1983_2024.csv years 1983-2023 (918 items)`: the file's name, its filters, its size. */
function describeSplit(source: DatasetSource, count: number): string {
  const parts = [basename(source.path)];
  if (source.years) parts.push(`years ${source.years[0]}-${source.years[1]}`);
  if (source.limit !== undefined) parts.push(`limit ${source.limit}`);
  parts.push(`(${count} items)`);
  return parts.join(' ');
}

function toTaskItem(item: BenchmarkItem, path: string): TaskItem {
  const metadata: Record<string, unknown> = { ...item.metadata };
  if (item.year !== undefined) metadata.year = item.year;
  metadata.references = [...item.references];
  if (item.numbers) metadata.numbers = [...item.numbers];
  if (item.choices) metadata.choices = [...item.choices];
  metadata.source = path;
  // `question`, not `prompt`: the prompt may carry the file's own "<answer> tags" instruction,
  // and the agent has its own answer protocol (the `finish` action).
  return { id: item.id, question: item.question, answer: item.answer, metadata };
}

/**
 * A task source over two benchmark files (any format `loadDataset` reads, with a field
 * mapping for a user's JSONL). Items keep the file's ids, which must be unique across both
 * splits (an INVALID_CONFIG naming both files and the id otherwise). The reward is the
 * package's answer checker on the item's references (Game of 24 by evaluation, choices,
 * math, exact match); the only tool is the sandboxed python REPL. Files are read once, here.
 */
export function createDatasetTaskSource(settings: DatasetTaskSourceSettings): TaskSource {
  const { train, test, sympy, name } = settings;
  const loaded = { train: loadDataset(train), test: loadDataset(test) };
  const benchmarkItems = new Map<string, BenchmarkItem>();
  for (const split of ['train', 'test'] as const) {
    for (const item of loaded[split]) {
      if (benchmarkItems.has(item.id)) {
        // Each file's ids are unique already (the loaders check), so a clash is across files.
        throw new AgentFlowError({
          code: 'INVALID_CONFIG',
          message: `Id ${describeValue(item.id)} is in both the train file ${train.path} and the test file ${test.path}; trajectories and resumes key on ids, so they must be unique across both splits. Rename the ids in one of the files.`,
          details: { id: item.id, train: train.path, test: test.path },
        });
      }
      benchmarkItems.set(item.id, item);
    }
  }
  const splits: Record<TaskSplitName, readonly TaskItem[]> = {
    train: Object.freeze(loaded.train.map((item) => toTaskItem(item, train.path))),
    test: Object.freeze(loaded.test.map((item) => toTaskItem(item, test.path))),
  };
  const items = new Map<string, TaskItem>([...splits.train, ...splits.test].map((item) => [item.id, item]));
  const checker = createAnswerChecker(sympy ? { sympy } : {});
  const generated = `${describeSplit(train, splits.train.length)} / ${describeSplit(test, splits.test.length)}`;

  const benchmarkItem = (id: string): BenchmarkItem => {
    const item = benchmarkItems.get(id);
    if (!item) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `No item ${describeValue(id)} in ${train.path} or ${test.path}.`,
        details: { id, train: train.path, test: test.path },
      });
    }
    return item;
  };

  return {
    kind: 'datasets',
    description: name ? `${name}: ${generated}` : generated,
    split: (split) => splits[split],
    item(id) {
      benchmarkItem(id);
      return items.get(id) as TaskItem;
    },
    async reward(item, answer) {
      // An item of another source is a caller's bug, not a wrong answer: NOT_FOUND.
      const reference = benchmarkItem(item.id);
      if (typeof answer !== 'string' || answer.trim() === '') return 0;
      try {
        const check = await checker.check(answer, reference, answerFormatFor(reference));
        return check.correct ? 1 : 0;
      } catch {
        // The checker's rules do not throw on any text (hostile-input tests); a broken sympy
        // or judge still must not end a run over one answer.
        return 0;
      }
    },
    createTools(toolSettings = {}) {
      const python = createPooledPythonTool({ slots: toolSettings.pythonSlots ?? DEFAULT_PYTHON_SLOTS, slotPrefix: 'dataset-python-' });
      return { tools: [python.tool], unavailableReason: python.unavailableReason, dispose: python.dispose };
    },
    // Nothing to release: the source starts no process itself, and a given sympy is the caller's.
    dispose: async () => {},
  };
}
