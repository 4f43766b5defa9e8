import { AgentFlowError, createRandom, type Random } from '@agentflow/core';
import { checkTaskWorldAnswer } from './check-task-world-answer';
import { type CorpusSearch, createCorpusSearch, formatCorpusSearchOutput } from './corpus-search';
import { generateNames } from './names';
import { checkQueryOf, drawStaleFacts, isStaleFactText, worldCorpus } from './stale-facts';
import { ATTRIBUTES, type Attribute, type Operand, TEMPLATES, type TaskTemplate, type WorldEntity } from './templates';
import { parseTaskWorldSettings, type ResolvedTaskWorldSettings, type TaskWorldSettings } from './task-world-settings';
import {
  TASK_WORLD_PYTHON_TOOL,
  TASK_WORLD_SEARCH_TOOL,
  type TaskWorldDemonstration,
  type TaskWorldDocument,
  type TaskWorldSplit,
  type TaskWorldTask,
} from './types';

/** A generated world: corpus, tasks in two splits, expert demonstrations, answer checking. */
export interface TaskWorld {
  readonly settings: ResolvedTaskWorldSettings;
  /** One document per entity, ready to write as JSONL (`{id, title, text}`). */
  readonly corpus: TaskWorldDocument[];
  /** Train tasks first, then test tasks. */
  readonly tasks: TaskWorldTask[];
  /** One expert demonstration per task, in the order of `tasks`. */
  readonly demonstrations: TaskWorldDemonstration[];
  /**
   * The first hit of `query` under the world's BM25 (`createCorpusSearch`), which is what the
   * world task source's `corpus_search` shows; undefined when no document shares a term.
   */
  lookup(query: string): TaskWorldDocument | undefined;
  split(name: TaskWorldSplit): TaskWorldTask[];
  task(taskId: string): TaskWorldTask;
  demonstration(taskId: string): TaskWorldDemonstration;
  /** True when `response` states the task's answer; never throws on malformed responses. */
  checkAnswer(taskId: string, response: unknown): boolean;
}

interface Draft {
  template: TaskTemplate;
  entities: WorldEntity[];
  question: string;
  operands: Operand[];
  code: string;
  answer: number;
}

/** Draws entities and attributes that fit the template; a difference that would be negative is asked the other way round. */
function draw(random: Random, template: TaskTemplate, entities: readonly WorldEntity[]): Draft | undefined {
  for (let attempt = 0; attempt < 20; attempt++) {
    const chosen = random.shuffle([...entities]).slice(0, template.entities);
    const attributes = random.shuffle([...ATTRIBUTES]).slice(0, template.attributes) as Attribute[];
    for (const [order, names] of [
      [chosen, attributes],
      [[...chosen].reverse(), [...attributes].reverse()],
    ] as const) {
      const output = template.build(order, names);
      if (output) return { template, entities: [...order], ...output };
    }
  }
  return undefined;
}

/** Hits shown per search, as the executor's `corpus_search` shows by default. */
const SEARCH_HITS = 3;

/** The expert looks each fact up and, where the first hit is a stale entry, checks it with the more precise query. */
function demonstrate(task: TaskWorldTask, draft: Draft, search: CorpusSearch): TaskWorldDemonstration {
  const lookup = (thought: string, query: string) => {
    const hits = search.search(query, SEARCH_HITS);
    return { hits, step: { action: { thought, action: TASK_WORLD_SEARCH_TOOL, action_input: { query } }, observation: formatCorpusSearchOutput(query, hits) } };
  };
  return {
    taskId: task.id,
    question: task.question,
    answer: task.answer,
    steps: [
      ...draft.operands.flatMap((operand) => {
        const query = `${operand.entity} ${operand.attribute}`;
        const found = lookup(`find ${query}`, query);
        const first = found.hits[0]?.document.text;
        return first !== undefined && isStaleFactText(first) ? [found.step, lookup('check', checkQueryOf(query)).step] : [found.step];
      }),
      { action: { thought: 'compute', action: TASK_WORLD_PYTHON_TOOL, action_input: { code: draft.code } }, observation: `${task.answer}\n` },
      { action: { thought: 'done', action: 'finish', action_input: task.answer } },
    ],
  };
}

/**
 * Generates the built-in task world: entities with three small counts each (one corpus
 * document per fact: `Riri has 3 cats.`), and questions that need one lookup per count they
 * use (two or three) and one `python` call. Train and test never share a (template, entities) pair, so a test
 * question is never a train question with other numbers. Deterministic in `seed`.
 *
 * With `decoyRate`, some facts also have a stale entry that the plain lookup returns first (a
 * recoverable mistake: its text says `(outdated)` and the check `<name> <count> now` finds the
 * current value); the tasks stay the same. With `stepSlack`, every task carries `maxSteps`.
 */
export function createTaskWorld(settings: TaskWorldSettings = {}): TaskWorld {
  const resolved = parseTaskWorldSettings(settings);
  const random = createRandom(resolved.seed);
  const factRandom = random.fork('facts');
  const names = generateNames(random.fork('names'), resolved.entities);
  const entities: WorldEntity[] = names.map((name) => ({
    name,
    facts: Object.fromEntries(ATTRIBUTES.map((attribute) => [attribute, factRandom.int(resolved.minValue, resolved.maxValue)])) as Record<
      Attribute,
      number
    >,
  }));
  const templates = TEMPLATES.filter((template) => resolved.levels.includes(template.level) && template.entities <= entities.length);
  const wanted = resolved.trainTasks + resolved.testTasks;
  const taskRandom = random.fork('tasks');
  // Forked after the others, so that names, facts and tasks do not depend on the decoys.
  const stale = resolved.decoyRate ? drawStaleFacts(random.fork('decoys'), entities, { ...resolved, decoyRate: resolved.decoyRate }) : [];
  const corpus = worldCorpus(entities, stale);
  const seenKeys = new Set<string>();
  const drafts: Draft[] = [];
  let attempts = 0;
  while (drafts.length < wanted) {
    if (++attempts > wanted * 200) {
      throw new AgentFlowError({
        code: 'INVALID_CONFIG',
        message: `The task world cannot make ${wanted} distinct tasks from ${entities.length} entities at levels ${resolved.levels.join(', ')}; add entities or ask for fewer tasks.`,
        details: { wanted, made: drafts.length },
      });
    }
    const level = taskRandom.choice(resolved.levels);
    const template = taskRandom.choice(templates.filter((candidate) => candidate.level === level));
    const draft = draw(taskRandom, template, entities);
    if (!draft) continue;
    // One task per (template, entities): the split below is then disjoint on that pair.
    const key = `${template.id}:${draft.entities.map((entity) => entity.name).join(',')}`;
    if (seenKeys.has(key)) continue;
    seenKeys.add(key);
    drafts.push(draft);
  }
  const tasks: TaskWorldTask[] = drafts.map((draft, index) => {
    const split: TaskWorldSplit = index < resolved.trainTasks ? 'train' : 'test';
    const number = split === 'train' ? index : index - resolved.trainTasks;
    return {
      id: `${split}-${number}`,
      question: draft.question,
      answer: String(draft.answer),
      split,
      level: draft.template.level,
      template: draft.template.id,
      entities: draft.entities.map((entity) => entity.name),
    };
  });
  const search = createCorpusSearch(corpus);
  const demonstrations = tasks.map((task, index) => demonstrate(task, drafts[index] as Draft, search));
  const { stepSlack } = resolved;
  if (stepSlack !== undefined) {
    for (const [index, task] of tasks.entries()) task.maxSteps = (demonstrations[index] as TaskWorldDemonstration).steps.length + stepSlack;
  }
  const byId = new Map(tasks.map((task, index) => [task.id, index]));
  const indexOf = (taskId: string): number => {
    const index = byId.get(taskId);
    if (index === undefined) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `No task ${JSON.stringify(taskId)} in this task world (ids are train-0..train-${resolved.trainTasks - 1}, test-0..test-${resolved.testTasks - 1}).`,
        details: { taskId },
      });
    }
    return index;
  };
  return {
    settings: resolved,
    corpus,
    tasks,
    demonstrations,
    lookup: (query) => search.search(query, 1)[0]?.document,
    split: (name) => tasks.filter((task) => task.split === name),
    task: (taskId) => tasks[indexOf(taskId)] as TaskWorldTask,
    demonstration: (taskId) => demonstrations[indexOf(taskId)] as TaskWorldDemonstration,
    checkAnswer: (taskId, response) => checkTaskWorldAnswer(response, (tasks[indexOf(taskId)] as TaskWorldTask).answer),
  };
}
