import { join } from 'node:path';
import { writeFileAtomic } from '@agentflow/core';
import type { TaskWorld } from './create-task-world';

const toJsonl = (records: readonly unknown[]) => records.map((record) => `${JSON.stringify(record)}\n`).join('');

/** The files `writeTaskWorld` produces, by name. */
export interface TaskWorldFiles {
  corpus: string;
  tasks: string;
  demonstrations: string;
}

/**
 * Writes the world as three JSONL files in `directory`: `corpus.jsonl` (`{id, title, text}`,
 * the input of the executor's `corpus_search`), `tasks.jsonl` and `demonstrations.jsonl`.
 */
export function writeTaskWorld(world: TaskWorld, directory: string): TaskWorldFiles {
  const files = {
    corpus: join(directory, 'corpus.jsonl'),
    tasks: join(directory, 'tasks.jsonl'),
    demonstrations: join(directory, 'demonstrations.jsonl'),
  };
  writeFileAtomic(files.corpus, toJsonl(world.corpus));
  writeFileAtomic(files.tasks, toJsonl(world.tasks));
  writeFileAtomic(files.demonstrations, toJsonl(world.demonstrations));
  return files;
}
