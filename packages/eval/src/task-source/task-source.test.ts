import { createRandom } from '@agentflow/core';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createTaskWorld } from '../task-world/create-task-world';
import { createDatasetTaskSource } from './dataset-task-source';
import { checkSplitLeakage } from './split-leakage';
import type { TaskItem } from './task-source';
import { createWorldTaskSource } from './world-task-source';
import { createWorldTeacher, evaluateWorldCode } from '../task-world/world-teacher';

/** Runs `run` and returns the AgentFlowError it throws (fails the test when it does not). */
function thrown(run: () => unknown): AgentFlowError {
  try {
    run();
  } catch (error) {
    if (AgentFlowError.isInstance(error)) return error;
    throw error;
  }
  return expect.unreachable('expected an AgentFlowError');
}

const folder = process.env.AGENTFLOW_DATASETS ?? resolve(__dirname, '..', '..', '..', '..', '..', 'shared', 'datasets');
const present = existsSync(join(folder, 'aime_1983_2024.csv')) && existsSync(join(folder, 'aime24.json'));
if (!present) {
  console.log(`task-source: real AIME tests SKIPPED, no benchmark files at ${folder} (set AGENTFLOW_DATASETS to run them).`);
}

describe.skipIf(!present)(`dataset task source on the AIME files in ${folder}`, () => {
  const csv = join(folder, 'aime_1983_2024.csv');
  const aime24 = join(folder, 'aime24.json');
  const source = present
    ? createDatasetTaskSource({ train: { path: csv, format: 'aime-csv', years: [1983, 2023] }, test: { path: aime24, format: 'agentflow-json' } })
    : undefined;

  it('has 918 train and 30 test items, described by file, years and size', () => {
    if (!source) return;
    expect(source.kind).toBe('datasets');
    expect(source.split('train')).toHaveLength(918);
    expect(source.split('test')).toHaveLength(30);
    expect(source.description).toBe('aime_1983_2024.csv years 1983-2023 (918 items) / aime24.json (30 items)');
    const first = source.item('1983_AIME_1');
    expect(first.metadata).toMatchObject({ year: 1983, source: csv, references: [first.answer] });
    const test = source.split('test')[0];
    expect(test?.question).not.toContain('When ready, output');
    expect(test?.metadata.source).toBe(aime24);
    expect(thrown(() => source.item('no-such-id')).code).toBe('NOT_FOUND');
  });

  it('rewards the right answer 1 and a wrong, missing or garbage answer 0', async () => {
    if (!source) return;
    for (const item of [...source.split('test'), source.item('1983_AIME_1')]) {
      expect(await source.reward(item, `\\boxed{${item.answer}}`), item.id).toBe(1);
      expect(await source.reward(item, String(Number(item.answer) + 1)), item.id).toBe(0);
    }
    const item = source.split('test')[0]!;
    expect(await source.reward(item, item.answer)).toBe(1);
    for (const answer of [undefined, '', '   ', 'no idea at all', '{}', '\\boxed{', '<answer></answer>']) {
      expect(await source.reward(item, answer), String(answer)).toBe(0);
    }
  });

  it('finds no leakage between 1983-2023 and aime24, in well under a second', () => {
    if (!source) return;
    const started = performance.now();
    const { source: checked, record } = checkSplitLeakage(source, { onLeak: 'refuse' });
    const elapsed = performance.now() - started;
    console.log(`task-source: AIME 918 x 30 leakage check took ${elapsed.toFixed(0)} ms`);
    expect(elapsed).toBeLessThan(2500);
    expect(checked).toBe(source);
    expect(record).toEqual({ method: 'near-duplicate', checked: { train: 918, test: 30 }, threshold: 0.5, pairs: [], dropped: [], onLeak: 'refuse' });
  });

  it('refuses 1983-2024 vs aime24 naming the 2024 copies, or drops exactly the leaked items', () => {
    const leaking = createDatasetTaskSource({
      train: { path: csv, format: 'aime-csv', years: [1983, 2024] },
      test: { path: aime24, format: 'agentflow-json' },
    });
    const error = thrown(() => checkSplitLeakage(leaking, { onLeak: 'refuse' }));
    expect(error.code).toBe('DATA_LEAKAGE');
    expect(error.message).toMatch(/\d+ ~ 2024_AIME_I+_\d+ \(\d\.\d\d\)/);
    expect(error.message).toContain('task.onLeakage: drop');
    expect(error.details).toMatchObject({ pairs: expect.arrayContaining([expect.objectContaining({ train_id: expect.stringMatching(/^2024_AIME/) })]) });

    const { source: clean, record } = checkSplitLeakage(leaking, { onLeak: 'drop' });
    expect(record.dropped.length).toBeGreaterThan(0);
    expect(record.dropped.every((id) => id.startsWith('2024_AIME'))).toBe(true);
    expect(record.pairs.map((pair) => pair.trainId).sort()).toEqual(expect.arrayContaining(record.dropped));
    const before = leaking.split('train').map((item) => item.id);
    const after = clean.split('train').map((item) => item.id);
    expect(after).toEqual(before.filter((id) => !record.dropped.includes(id)));
    expect(clean.split('test')).toBe(leaking.split('test'));
    expect(thrown(() => clean.item(record.dropped[0]!)).code).toBe('NOT_FOUND');
    expect(clean.description).toContain(`${record.dropped.length} leaked train item(s) dropped`);
    expect(JSON.parse(JSON.stringify(record))).toEqual(record);
    // What is left is clean.
    expect(checkSplitLeakage(clean, { onLeak: 'refuse' }).record.pairs).toEqual([]);
  });
});

describe('dataset task source on a JSONL written here', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentflow-task-source-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, records: object[]) => {
    const path = join(dir, name);
    writeFileSync(path, `${records.map((record) => JSON.stringify(record)).join('\n')}\n`);
    return path;
  };
  const fields = { id: 'key', question: 'q', answer: 'a' };
  const train = write('train.jsonl', [
    { key: 'capital-fr', q: 'What is the capital of France?', a: 'Paris', topic: 'geography' },
    { key: 'half', q: 'What is one half as a fraction?', a: '\\frac{1}{2}' },
  ]);
  const test = write('test.jsonl', [{ key: 'seven', q: 'What is 3 + 4?', a: '7' }]);

  it('maps the fields into items whose reward checks the answer', async () => {
    const source = createDatasetTaskSource({
      train: { path: train, format: 'jsonl', fields },
      test: { path: test, format: 'jsonl', fields, limit: 1 },
      name: 'mine',
    });
    expect(source.description).toBe('mine: train.jsonl (2 items) / test.jsonl limit 1 (1 items)');
    expect(source.split('train')[0]).toEqual({
      id: 'capital-fr',
      question: 'What is the capital of France?',
      answer: 'Paris',
      metadata: { topic: 'geography', references: ['Paris'], source: train },
    });
    const [capital, half] = source.split('train') as [TaskItem, TaskItem];
    expect(await source.reward(capital, 'paris')).toBe(1);
    expect(await source.reward(capital, 'The answer is Lyon')).toBe(0);
    expect(await source.reward(half, '0.5')).toBe(1);
    expect(await source.reward(source.item('seven'), '<answer>7</answer>')).toBe(1);
    expect(await source.reward(source.item('seven'), '8')).toBe(0);
    expect(source.demonstration).toBeUndefined();
    await source.dispose?.();
    await source.dispose?.();
  });

  it('refuses an id that is in both files with INVALID_CONFIG naming it and both files', () => {
    const clash = write('clash.jsonl', [{ key: 'half', q: 'What is two halves?', a: '1' }]);
    const error = thrown(() =>
      createDatasetTaskSource({ train: { path: train, format: 'jsonl', fields }, test: { path: clash, format: 'jsonl', fields } }),
    );
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain('"half"');
    expect(error.message).toContain(train);
    expect(error.message).toContain(clash);
  });

  it('refuses bad leakage settings and tool settings by value', () => {
    const source = createDatasetTaskSource({ train: { path: train, format: 'jsonl', fields }, test: { path: test, format: 'jsonl', fields } });
    expect(thrown(() => checkSplitLeakage(source, { onLeak: 'ignore' as never })).message).toMatch(/onLeak/);
    expect(thrown(() => checkSplitLeakage(source, { onLeak: 'drop', threshold: 1.5 })).message).toMatch(/threshold/);
    expect(thrown(() => source.createTools({ pythonSlots: 0 })).message).toContain('got 0');
  });
});

describe('world task source', () => {
  const world = createTaskWorld({ seed: 3, entities: 8, trainTasks: 12, testTasks: 4 });
  const source = createWorldTaskSource(world);

  it('has the world splits, answers and metadata, and the world itself', () => {
    expect(source.kind).toBe('world');
    expect(source.world).toBe(world);
    expect(source.description).toBe('task world seed 3 (12 train / 4 test tasks, levels 1, 2, 8 entities)');
    for (const name of ['train', 'test'] as const) {
      expect(source.split(name)).toEqual(
        world.split(name).map((task) => ({
          id: task.id,
          question: task.question,
          answer: task.answer,
          metadata: { level: task.level, template: task.template, entities: task.entities },
        })),
      );
    }
    expect(source.item('test-0').answer).toBe(world.task('test-0').answer);
    expect(thrown(() => source.item('train-99')).code).toBe('NOT_FOUND');
  });

  it('rewards the right answer 1 and others 0; demonstrations end with finish', async () => {
    for (const item of source.split('test')) {
      expect(await source.reward(item, item.answer)).toBe(1);
      expect(await source.reward(item, String(Number(item.answer) + 1))).toBe(0);
      expect(await source.reward(item, undefined)).toBe(0);
      const actions = source.demonstration?.(item)?.actions ?? [];
      expect(actions.at(-1)).toEqual({ thought: 'done', action: 'finish', action_input: item.answer });
      expect(actions.slice(0, -2).every((action) => action.action === 'corpus_search')).toBe(true);
    }
  });

  it('builds corpus_search and python; both run for real', async () => {
    const tools = source.createTools({ pythonSlots: 2 });
    try {
      expect(tools.tools.map((tool) => tool.name)).toEqual(['corpus_search', 'python']);
      const [search, python] = tools.tools as [(typeof tools.tools)[0], (typeof tools.tools)[0]];
      const context = { signal: new AbortController().signal, taskId: 'train-0' };
      const demo = source.demonstration?.(source.item('train-0'))?.actions ?? [];
      const input = demo[0]?.action_input as { query: string };
      const fact = world.corpus.find((document) => document.title === input.query);
      // One hit, shown as its title and text: the layout the trainer's world tools have had.
      expect(await search.execute(input, context)).toMatchObject({ output: `${fact?.title}: ${fact?.text}` });
      const reason = await tools.unavailableReason();
      if (reason) {
        console.log(`task-source: python call SKIPPED, the python tool cannot run here: ${reason}`);
        return;
      }
      const result = await python.execute({ code: 'print(2+3)' }, context);
      expect(result.error).toBeUndefined();
      expect(result.output).toContain('5');
    } finally {
      await tools.dispose();
      await tools.dispose();
    }
  });

  it('passes the leakage guard by identity: disjoint (template, entities), though the questions read alike', () => {
    const { source: guarded, record } = checkSplitLeakage(source, { onLeak: 'refuse' });
    expect(guarded).toBe(source);
    expect(record).toMatchObject({ method: 'identity', checked: { train: 12, test: 4 }, pairs: [], dropped: [] });
    // The default world (800 / 60) judged by text alone would be refused: its templates make
    // near-duplicates (100 pairs at 0.5), though no test task is a training task.
    const full = createWorldTaskSource(createTaskWorld({}));
    expect(checkSplitLeakage(full, { onLeak: 'refuse' }).record.pairs).toEqual([]);
    expect(() => checkSplitLeakage({ ...full, leakageKey: undefined }, { onLeak: 'refuse' })).toThrow(/leak into/);
  });

  it('refuses, or drops, a training task that is a test task by identity', () => {
    const test = source.split('test')[0]!;
    const copy = { ...test, id: 'train-copy' };
    const leaky = { ...source, split: (name: 'train' | 'test') => (name === 'train' ? [...source.split('train'), copy] : source.split('test')) };
    expect(() => checkSplitLeakage(leaky, { onLeak: 'refuse' })).toThrow(`test-0 ~ train-copy (1.00)`);
    const { source: dropped, record } = checkSplitLeakage(leaky, { onLeak: 'drop' });
    expect(record.dropped).toEqual(['train-copy']);
    expect(dropped.split('train')).toHaveLength(12);
  });
});

describe('the world teacher', () => {
  const world = createTaskWorld({ seed: 3, entities: 8, trainTasks: 40, testTasks: 4 });

  it('is the exact expert at error rate 0, and flawed about as often as asked otherwise', () => {
    const exact = createWorldTeacher(world, { errorRate: 0, random: createRandom(1) });
    for (const task of world.split('train')) expect(exact(task.id)).toEqual({ actions: world.demonstration(task.id).steps.map((step) => step.action), exact: true });
    const flawed = createWorldTeacher(world, { errorRate: 0.5, mistakes: ['operator'], random: createRandom(1) });
    const demonstrations = world.split('train').map((task) => ({ task, demonstration: flawed(task.id) }));
    const wrong = demonstrations.filter(({ demonstration }) => !demonstration.exact);
    expect(wrong.length).toBeGreaterThan(10);
    expect(wrong.length).toBeLessThan(30);
    const codeOf = (actions: readonly { action: string; action_input: unknown }[]) =>
      String((actions.find((action) => action.action === 'python')?.action_input as { code?: string } | undefined)?.code);
    for (const { task, demonstration } of wrong) {
      const code = codeOf(demonstration.actions);
      const exactCode = codeOf(world.demonstration(task.id).steps.map((step) => step.action));
      expect(code).not.toBe(exactCode);
      // The flawed demonstration answers what its own code prints, right only when the wrong operator happens to agree.
      expect(demonstration.actions.at(-1)?.action_input).toBe(String(evaluateWorldCode(code)));
      expect(world.checkAnswer(task.id, String(evaluateWorldCode(code)))).toBe(evaluateWorldCode(code) === evaluateWorldCode(exactCode));
    }
  });
});


describe('the world task source with a teacher', () => {
  const world = createTaskWorld({ seed: 3, entities: 8, trainTasks: 40, testTasks: 4 });
  const teacher = { errorRate: 0.5, mistakes: ['lookup', 'operator'] as const, seed: 5 };

  it("demonstrates the training split as the teacher drawn in split order does, whatever order it is asked in", () => {
    const source = createWorldTaskSource(world, { teacher });
    const inOrder = createWorldTeacher(world, { ...teacher, random: createRandom(teacher.seed).fork('expert-errors') });
    const expected = world.split('train').map((task) => inOrder(task.id));
    // Asked backwards, twice: the same demonstration for each task.
    const train = [...source.split('train')].reverse();
    const asked = train.map((item) => source.demonstration?.(item)).reverse();
    expect(asked).toEqual(expected);
    expect(train.map((item) => source.demonstration?.(item)).reverse()).toEqual(expected);
    const flawed = asked.filter((demonstration) => demonstration?.exact === false);
    expect(flawed.length).toBeGreaterThan(10);
    expect(flawed.length).toBeLessThan(30);
    // A source with the same teacher gives the same demonstrations; the test split has its own, after the training split's.
    expect(source.split('test').map((item) => createWorldTaskSource(world, { teacher }).demonstration?.(item))).toEqual(source.split('test').map((item) => source.demonstration?.(item)));
  });

  it("is the world's exact expert without one, and refuses an error rate outside [0, 1]", () => {
    const source = createWorldTaskSource(world);
    for (const item of source.split('train')) {
      expect(source.demonstration?.(item)).toEqual({ actions: world.demonstration(item.id).steps.map((step) => step.action), exact: true });
    }
    expect(thrown(() => createWorldTaskSource(world, { teacher: { errorRate: 1.5, seed: 0 } }).demonstration?.(source.item('train-0'))).message).toContain('got 1.5');
  });
});
