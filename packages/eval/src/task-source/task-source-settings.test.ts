import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { longestDemonstration } from './longest-demonstration';
import { createTaskWorld } from '../task-world/create-task-world';
import { openConfiguredTaskSource } from './open-configured-task-source';
import { TASK_WORLD_BOUNDS, taskSourceSettingsSchema, taskSourceSettingsSchemaWith, worldPlannerShapeIssues } from './task-source-settings';
import { createWorldTaskSource } from './world-task-source';

/** The issues of a failed parse as `path: message` lines. */
function issuesOf(input: unknown, schema = taskSourceSettingsSchema): string[] {
  const parsed = schema.safeParse(input);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

const fixtures = join(__dirname, '..', 'datasets', '__fixtures__');
const root = mkdtempSync(join(tmpdir(), 'agentflow-task-settings-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the task settings block', () => {
  it('is the generated world with recoverable mistakes by default, with its planner, teacher and leakage defaults', () => {
    const task = taskSourceSettingsSchema.parse(undefined);
    expect(task).toMatchObject({ kind: 'world', seed: 7, entities: 24, trainTasks: 800, testTasks: 240, levels: [1, 2], maxValue: 9, decoyRate: 0.3, stepSlack: 2, leakageThreshold: 0.5, onLeakage: 'refuse' });
    if (task.kind !== 'world') throw new Error('expected the world');
    expect(task.planner).toEqual({
      hiddenSize: 128,
      layers: 2,
      heads: 4,
      keyValueHeads: 4,
      intermediateSize: 256,
      ropeTheta: 10000,
      bpeMerges: 300,
    });
    expect(task.teacher).toEqual({ errorRate: 0.4, mistakes: ['lookup'], recoveryRate: 0.2 });
  });

  it('bounds the world before it is generated, and refuses unknown keys', () => {
    expect(issuesOf({ kind: 'world', trainTasks: 1e12 })).toEqual([`trainTasks: Too big: expected number to be <=${TASK_WORLD_BOUNDS.trainTasks}`]);
    expect(issuesOf({ kind: 'world', planner: { hiddenSize: 1e9 } })[0]).toMatch(/^planner\.hiddenSize: Too big: expected number to be <=4096/);
    expect(issuesOf({ kind: 'world', trainTask: 5 })[0]).toMatch(/trainTask/);
    expect(issuesOf({ kind: 'datasets', train: { path: 'a.jsonl', format: 'jsonl' } })[0]).toMatch(/^test: /);
  });

  it("checks the planner's Qwen3 shape at its keys, and its size in the caller's words", () => {
    expect(issuesOf({ kind: 'world', planner: { heads: 4, keyValueHeads: 3 } })).toEqual(['planner.keyValueHeads: keyValueHeads must divide heads (4), got 3']);
    expect(issuesOf({ kind: 'world', planner: { hiddenSize: 30, heads: 4 } })[0]).toMatch(/^planner\.hiddenSize: hiddenSize must be a multiple of heads \(4\)/);
    const large = { hiddenSize: 4096, heads: 32, keyValueHeads: 8, layers: 64, intermediateSize: 16384 };
    const [issue] = worldPlannerShapeIssues(large);
    expect(issue).toEqual({ key: 'layers', message: expect.stringMatching(/^the planner's decoder layers would hold \d+ parameters, more than 1000000000 \(the world's planner trains on the CPU/) });
    const worded = taskSourceSettingsSchemaWith({ plannerRequest: '`model: tiny`', oversizedPlanner: 'pick a smaller one' });
    expect(issuesOf({ kind: 'world', planner: large }, worded)).toEqual([expect.stringMatching(/^planner\.layers: .* more than 1000000000 \(pick a smaller one\)$/)]);
    expect(worldPlannerShapeIssues({ hiddenSize: 128, heads: 4, keyValueHeads: 4, layers: 2, intermediateSize: 256 })).toEqual([]);
  });
});

describe('openConfiguredTaskSource', () => {
  it("opens the world with the teacher drawing from the caller's seed, and its planner", async () => {
    const task = taskSourceSettingsSchema.parse({ kind: 'world', seed: 3, entities: 8, trainTasks: 20, testTasks: 4, teacher: { errorRate: 0.5, mistakes: ['operator', 'lookup'] } });
    const opened = openConfiguredTaskSource(task, { seed: 1 });
    expect(opened.source.kind).toBe('world');
    expect(opened.source.split('train')).toHaveLength(20);
    const demonstrations = (seed: number) => {
      const { source } = openConfiguredTaskSource(task, { seed });
      return source.split('train').map((item) => source.demonstration!(item)!.exact);
    };
    expect(demonstrations(1)).toEqual(demonstrations(1));
    expect(demonstrations(1)).toContain(false);
    const exact = openConfiguredTaskSource(taskSourceSettingsSchema.parse({ ...task, teacher: { errorRate: 0, recoveryRate: 0 } }), { seed: 1 }).source;
    expect(exact.split('train').every((item) => exact.demonstration!(item)!.exact)).toBe(true);
    expect(opened.createPresetPlanner).toBeTypeOf('function');
  });

  it('opens the world with recoverable mistakes: items carry their step budget, the teacher recovers and answers right', () => {
    const block = { kind: 'world', seed: 3, entities: 8, trainTasks: 20, testTasks: 4, decoyRate: 0.5, stepSlack: 1 };
    const recovering = openConfiguredTaskSource(taskSourceSettingsSchema.parse({ ...block, teacher: { errorRate: 0, recoveryRate: 1, recoveries: ['decoy'] } }), { seed: 1 }).source;
    const exact = openConfiguredTaskSource(taskSourceSettingsSchema.parse({ ...block, teacher: { errorRate: 0, recoveryRate: 0 } }), { seed: 1 }).source;
    expect(recovering.description).toContain('decoy rate 0.5, step slack 1');
    const items = [...recovering.split('train'), ...recovering.split('test')];
    // The budget: the exact expert's decisions (a check after each stale lookup included) plus the slack.
    for (const item of items) expect(item.maxSteps).toBe(exact.demonstration!(exact.item(item.id))!.actions.length + 1);
    const recovered = recovering.split('train').map((item) => ({ item, demonstration: recovering.demonstration!(item)! })).filter(({ demonstration }) => !demonstration.exact);
    expect(recovered.length).toBeGreaterThan(0);
    for (const { item, demonstration } of recovered) {
      expect(demonstration.actions).toHaveLength(item.maxSteps!);
      expect(demonstration.actions.at(-1)).toMatchObject({ action: 'finish', action_input: item.answer });
    }
    // decoyRate 0 and stepSlack null: no budget, and the world of before, item for item.
    const plain = openConfiguredTaskSource(
      taskSourceSettingsSchema.parse({ kind: 'world', seed: 3, entities: 8, trainTasks: 20, testTasks: 4, decoyRate: 0, stepSlack: null, teacher: { recoveryRate: 0 } }),
      { seed: 1 },
    ).source;
    expect(plain.split('train').some((item) => 'maxSteps' in item)).toBe(false);
    expect(plain.description).toBe('task world seed 3 (20 train / 4 test tasks, levels 1, 2, 8 entities)');
    const before = createWorldTaskSource(createTaskWorld({ seed: 3, entities: 8, trainTasks: 20, testTasks: 4, maxValue: 9 }), { teacher: { errorRate: 0.4, mistakes: ['lookup'], seed: 1 } });
    expect(plain.split('train')).toEqual(before.split('train'));
    expect(plain.split('train').map((item) => plain.demonstration!(item))).toEqual(before.split('train').map((item) => before.demonstration!(item)));
  });

  it("refuses a teacher whose rates add up past 1, and a decoy mistake in a world without decoys", () => {
    expect(issuesOf({ kind: 'world', teacher: { errorRate: 0.8, recoveryRate: 0.5 } })).toEqual([
      'teacher.recoveryRate: errorRate and recoveryRate add up to more than 1 (one draw per demonstration decides between them); lower one of them',
    ]);
    expect(issuesOf({ kind: 'world', decoyRate: 0, teacher: { mistakes: ['decoy'], recoveryRate: 0.2, recoveries: ['decoy', 'python'] } })).toEqual([
      "teacher.mistakes: 'decoy' needs stale entries to use: set decoyRate above 0, or leave 'decoy' out of teacher.mistakes",
      "teacher.recoveries: 'decoy' needs stale entries to use: set decoyRate above 0, or leave 'decoy' out of teacher.recoveries",
    ]);
    expect(issuesOf({ kind: 'world', decoyRate: 0.3, teacher: { mistakes: ['decoy'], recoveries: ['decoy'] } })).toEqual([]);
    expect(issuesOf({ kind: 'world', stepSlack: -1 })[0]).toMatch(/^stepSlack: /);
  });

  it('opens benchmark files from the working directory, with no planner of their own', () => {
    const path = relative(process.cwd(), join(fixtures, 'mini-qa.jsonl'));
    const task = taskSourceSettingsSchema.parse({
      kind: 'datasets',
      train: { path, format: 'jsonl', fields: { id: 'uid', question: 'prompt_text', answer: 'gold' }, limit: 1 },
      test: { path: join(fixtures, 'mini-aime.csv'), format: 'aime-csv', years: [1990, 1990] },
    });
    const opened = openConfiguredTaskSource(task, { seed: 0 });
    expect(opened.source.kind).toBe('datasets');
    expect(opened.source.split('train').map((item) => item.id)).toEqual(['q1']);
    expect(opened.source.split('test').every((item) => item.id.startsWith('1990'))).toBe(true);
    expect(opened.createPresetPlanner).toBeUndefined();
    expect(longestDemonstration(opened.source)).toBeUndefined();
  });
});

describe("openConfiguredTaskSource's leakage guard", () => {
  const question = 'Which river flows through the city of Paris, the capital of France?';
  const train = join(root, 'train.jsonl');
  const test = join(root, 'test.jsonl');
  writeFileSync(train, `${JSON.stringify({ id: 'q1', question, answer: 'Seine' })}\n${JSON.stringify({ id: 'q2', question: 'What is 6 times 7?', answer: '42' })}\n`);
  writeFileSync(test, `${JSON.stringify({ id: 't1', question, answer: 'Seine' })}\n`);
  const leaking = (onLeakage: 'refuse' | 'drop') =>
    taskSourceSettingsSchema.parse({ kind: 'datasets', train: { path: train, format: 'jsonl' }, test: { path: test, format: 'jsonl' }, onLeakage });

  it("refuses a leak, or drops the leaked training items and records them, as the settings say", () => {
    expect(() => openConfiguredTaskSource(leaking('refuse'), { seed: 0 })).toThrow(expect.objectContaining({ code: 'DATA_LEAKAGE' }));
    const dropped = openConfiguredTaskSource(leaking('drop'), { seed: 0 });
    expect(dropped.leakage).toMatchObject({ method: 'near-duplicate', threshold: 0.5, onLeak: 'drop', dropped: ['q1'] });
    expect(dropped.source.split('train').map((item) => item.id)).toEqual(['q2']);
    const world = openConfiguredTaskSource(taskSourceSettingsSchema.parse({ kind: 'world', entities: 8, trainTasks: 20, testTasks: 4 }), { seed: 0 });
    expect(world.leakage).toMatchObject({ method: 'identity', checked: { train: 20, test: 4 }, onLeak: 'refuse' });
  });
});

describe('longestDemonstration', () => {
  it("finds the demonstration with the most decisions, the finish included, among the given items", () => {
    const { source } = openConfiguredTaskSource(taskSourceSettingsSchema.parse({ kind: 'world', seed: 3, entities: 8, trainTasks: 20, testTasks: 4, levels: [1, 2], teacher: { errorRate: 0 } }), { seed: 0 });
    const train = source.split('train');
    const longest = longestDemonstration(source)!;
    const lengths = train.map((item) => source.demonstration!(item)!.actions.length);
    expect(longest.steps).toBe(Math.max(...lengths));
    expect(longest.taskId).toBe(train[lengths.indexOf(longest.steps)]!.id);
    const shortest = train[lengths.indexOf(Math.min(...lengths))]!;
    expect(longestDemonstration(source, [shortest])).toEqual({ taskId: shortest.id, steps: Math.min(...lengths) });
    expect(longestDemonstration(source, [])).toBeUndefined();
  });
});
