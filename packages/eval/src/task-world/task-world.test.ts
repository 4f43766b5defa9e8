import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plannerActionSchema, readJsonl } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { checkTaskWorldAnswer } from './check-task-world-answer';
import { createCorpusSearch } from './corpus-search';
import { createTaskWorld } from './create-task-world';
import { TASK_WORLD_PYTHON_TOOL, TASK_WORLD_SEARCH_TOOL } from './types';
import { writeTaskWorld } from './write-task-world';

const world = createTaskWorld({ seed: 7, trainTasks: 160, testTasks: 80, levels: [1, 2, 3] });

describe('createTaskWorld', () => {
  it('is deterministic in its seed and differs across seeds', () => {
    const again = createTaskWorld({ seed: 7, trainTasks: 160, testTasks: 80, levels: [1, 2, 3] });
    expect(again.tasks).toEqual(world.tasks);
    expect(again.corpus).toEqual(world.corpus);
    expect(createTaskWorld({ seed: 8, trainTasks: 160, testTasks: 80 }).tasks).not.toEqual(world.tasks);
  });

  it('keeps everything small enough for a tiny byte-level policy', () => {
    expect(world.split('train')).toHaveLength(160);
    expect(world.split('test')).toHaveLength(80);
    for (const task of world.tasks) {
      expect(task.question.length, task.question).toBeLessThan(80);
      expect(task.answer).toMatch(/^\d{1,3}$/);
    }
    for (const document of world.corpus) {
      expect(document.title).toMatch(/^[A-Z][a-z]{3,4} (cats|dogs|hens)$/);
      expect(document.text.length).toBeLessThan(60);
    }
    expect(new Set(world.corpus.map((document) => document.title)).size).toBe(world.corpus.length);
    expect(new Set(world.tasks.map((task) => task.level))).toEqual(new Set([1, 2, 3]));
  });

  it('shares no (template, entities) pair and no question between train and test', () => {
    const key = (task: { template: string; entities: string[] }) => `${task.template}:${task.entities.join(',')}`;
    const trainKeys = new Set(world.split('train').map(key));
    const trainQuestions = new Set(world.split('train').map((task) => task.question));
    for (const task of world.split('test')) {
      expect(trainKeys.has(key(task))).toBe(false);
      expect(trainQuestions.has(task.question)).toBe(false);
    }
  });

  it('demonstrations are valid planner actions that look up every entity, compute once, then finish', () => {
    for (const demonstration of world.demonstrations) {
      const task = world.task(demonstration.taskId);
      const actions = demonstration.steps.map((step) => plannerActionSchema.parse(step.action));
      const lookups = actions.length - 2;
      expect(actions.map((action) => action.action)).toEqual([...Array(lookups).fill(TASK_WORLD_SEARCH_TOOL), TASK_WORLD_PYTHON_TOOL, 'finish']);
      // One lookup per count the question uses: two for the two-count templates, three for sum3.
      expect(lookups).toBe(task.template === 'sum3' ? 3 : 2);
      expect(actions[actions.length - 1]?.action_input).toBe(task.answer);
      for (const step of demonstration.steps) expect(JSON.stringify(step.action).length).toBeLessThan(96);
    }
  });

  it('has one document per fact: each entity has one per counted thing, holding one number', () => {
    expect(world.corpus).toHaveLength(world.settings.entities * 3);
    for (const document of world.corpus) {
      expect(document.text).toMatch(/^[A-Z][a-z]+ has \d+ (cats|dogs|hens)\.$/);
      expect(document.title).toBe(document.text.replace(/^(\w+) has \d+ (\w+)\.$/, '$1 $2'));
    }
  });

  it('each demonstration query finds the needed document first under BM25, and its observation is what the tool prints', () => {
    const search = createCorpusSearch(world.corpus);
    for (const demonstration of world.demonstrations) {
      const task = world.task(demonstration.taskId);
      const searches = demonstration.steps.filter((step) => step.action.action === TASK_WORLD_SEARCH_TOOL);
      const code = (demonstration.steps.at(-2)!.action.action_input as { code: string }).code;
      // One lookup per number the code uses, in the code's order, each finding its fact first.
      expect(searches.map((step) => step.observation?.match(/ has (\d+) /)?.[1])).toEqual(code.match(/\d+/g));
      for (const step of searches) {
        const query = (step.action.action_input as { query: string }).query;
        const [top] = search.search(query);
        expect(top?.document.title).toBe(query);
        expect(task.entities).toContain(query.split(' ')[0]);
        // The executor's corpus_search layout, with the document's text under its header.
        expect(step.observation).toMatch(new RegExp(`^\\[1\\] ${top?.document.title} \\(id ${top?.document.id}, score \\d+\\.\\d{3}\\)\\n${top?.document.text}`));
      }
    }
  });

  it('the python code of every demonstration prints the answer in a real python3', () => {
    const demonstrations = world.demonstrations;
    const codes = demonstrations.map((demonstration) => {
      const python = demonstration.steps.find((step) => step.action.action === TASK_WORLD_PYTHON_TOOL);
      return (python?.action.action_input as { code: string } | undefined)?.code ?? '';
    });
    const result = spawnSync('python3', ['-I', '-c', 'import json,sys\nfor c in json.load(sys.stdin): print(eval(c, {"__builtins__": {}}))'], {
      input: JSON.stringify(codes),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(0);
    const printed = result.stdout.trim().split('\n');
    demonstrations.forEach((demonstration, index) => {
      expect(printed[index]).toBe(demonstration.answer);
      const python = demonstration.steps.find((step) => step.action.action === TASK_WORLD_PYTHON_TOOL);
      expect(python?.observation).toBe(`${demonstration.answer}\n`);
    });
  });

  it('cannot be solved without the tools: guessing the commonest train answer scores under 10% on test', () => {
    const counts = new Map<string, number>();
    for (const task of world.split('train')) counts.set(task.answer, (counts.get(task.answer) ?? 0) + 1);
    const guess = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
    const test = world.split('test');
    const correct = test.filter((task) => world.checkAnswer(task.id, guess)).length;
    expect(correct / test.length).toBeLessThan(0.1);
  });

  it('names a wrong setting and an unknown task id', () => {
    expect(() => createTaskWorld({ entities: 2 })).toThrow(/entities: Too small/);
    expect(() => createTaskWorld({ minValue: 9, maxValue: 3 })).toThrow(/maxValue: minValue must be below maxValue/);
    expect(() => createTaskWorld({ entities: 4, trainTasks: 500, testTasks: 500, levels: [1] })).toThrow(/cannot make 1000 distinct tasks/);
    expect(() => world.task('train-999')).toThrow(/No task "train-999"/);
  });
});

describe('checkTaskWorldAnswer', () => {
  it('accepts the answer in the forms a planner produces and never throws on junk', () => {
    const task = world.split('test')[0];
    if (!task) throw new Error('no test task');
    expect(world.checkAnswer(task.id, task.answer)).toBe(true);
    expect(world.checkAnswer(task.id, Number(task.answer))).toBe(true);
    expect(world.checkAnswer(task.id, `<answer>${task.answer}</answer>`)).toBe(true);
    expect(world.checkAnswer(task.id, `The answer is ${task.answer}.`)).toBe(true);
    expect(world.checkAnswer(task.id, String(Number(task.answer) + 1))).toBe(false);
    expect(checkTaskWorldAnswer({ answer: 3 }, '3')).toBe(false);
    expect(checkTaskWorldAnswer(null, '3')).toBe(false);
    expect(checkTaskWorldAnswer('{"thought": "', '3')).toBe(false);
  });
});

describe('writeTaskWorld', () => {
  it('writes corpus, tasks and demonstrations as JSONL that reads back', () => {
    const directory = mkdtempSync(join(tmpdir(), 'task-world-'));
    const files = writeTaskWorld(world, directory);
    expect(readJsonl(files.corpus)).toEqual(world.corpus);
    expect(readJsonl(files.tasks)).toEqual(world.tasks);
    expect(readJsonl(files.demonstrations)).toEqual(world.demonstrations);
  });
});
