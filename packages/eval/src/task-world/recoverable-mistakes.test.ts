import { createHash } from 'node:crypto';
import { createRandom, type LanguageModel, type PlannerAction, type Trajectory } from '@agentflow/core';
import { createAgent } from '@agentflow/flow';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorldTaskSource } from '../task-source/world-task-source';
import { createTaskWorld, type TaskWorld } from './create-task-world';
import { parseWorldActions, queryOf } from './world-actions';
import { withWorldRecovery } from './world-recoveries';
import { createWorldTeacher, evaluateWorldCode, withWorldMistake } from './world-teacher';

const sha256 = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');
const worldHash = (world: TaskWorld) => sha256({ settings: world.settings, corpus: world.corpus, tasks: world.tasks, demonstrations: world.demonstrations });
const teacherHash = (world: TaskWorld, mistakes?: ['lookup']) => {
  const teach = createWorldTeacher(world, { errorRate: 0.4, ...(mistakes ? { mistakes } : {}), random: createRandom(0).fork('expert-errors') });
  return sha256(world.tasks.map((task) => teach(task.id)));
};

const exactActions = (world: TaskWorld, taskId: string) => world.demonstration(taskId).steps.map((step) => step.action);

/** A planner that writes the scripted actions, one per decision. */
function scripted(actions: readonly PlannerAction[]): LanguageModel {
  let next = 0;
  return {
    specificationVersion: 'v1',
    provider: 'script',
    modelId: 'script',
    chat: async () => ({ text: JSON.stringify(actions[next++] ?? {}), finishReason: 'stop', model: 'script' }),
  };
}

describe('the task world without decoys or a step budget', () => {
  it('is byte for byte the world and teacher of before these settings', () => {
    // Hashes computed with the code before decoyRate and stepSlack existed (commit a89dbd6), hard-coded on purpose:
    // a change here changes the embedded default's world, its demonstrations and hence every number of its runs.
    const defaultRun = createTaskWorld({ seed: 7, entities: 24, trainTasks: 800, testTasks: 60, maxValue: 9 });
    expect(worldHash(defaultRun)).toBe('f84e7e6285674cce078af08283b6428d4076a9541deb9541725b4922001cd543');
    expect(teacherHash(defaultRun, ['lookup'])).toBe('0760f4fc524f3116346ecbe46f1f76e6affa7d2a8a569e444673dbf137475e29');
    expect(teacherHash(defaultRun)).toBe('3924cf685004e1863715360ea0da00b70eb1b821d99956d7d22f73cf67274f93');
    const library = createTaskWorld({});
    expect(worldHash(library)).toBe('5d2151e38e4bb5ee1147a5f5a06697d0450d4d8cbcc90bfc8ceadd2961f47d07');
    expect(teacherHash(library)).toBe('442dda7b90c2aae03541b66c0236996836c3ac550d7abf99604733d31e6b2b93');
    const levels = createTaskWorld({ seed: 7, trainTasks: 160, testTasks: 80, levels: [1, 2, 3] });
    expect(worldHash(levels)).toBe('34c8c5d0640462542e5e95127d725224e0c2a601d99d891f58f5b38351f79f0f');
    expect(teacherHash(levels)).toBe('e0dd36bc096490871c6c1b61a38a37f42b9e192795dbf9aa37b8ad7ed76e559a');
  });
});

describe('a world with stale entries', () => {
  const settings = { seed: 3, entities: 8, trainTasks: 40, testTasks: 4, levels: [1, 2] as Array<1 | 2>, maxValue: 9 };
  const plain = createTaskWorld(settings);
  const world = createTaskWorld({ ...settings, decoyRate: 0.3, stepSlack: 1 });
  const tools = createWorldTaskSource(world).createTools({ pythonSlots: 1 });
  afterAll(() => tools.dispose());
  const [search] = tools.tools as [(typeof tools.tools)[0]];
  const show = async (query: string) => (await search.execute({ query }, { signal: new AbortController().signal, taskId: 'lookup' })).output;
  const run = (taskId: string, actions: readonly PlannerAction[]): Promise<Trajectory> => {
    const task = world.task(taskId);
    const agent = createAgent({ model: scripted(actions), tools: tools.tools, actionSchemaStyle: 'tied', maxRepairs: 0, ...(task.maxSteps ? { maxSteps: task.maxSteps } : {}) });
    return agent.run(task.question, { taskId, seed: 0 });
  };
  // A task whose first lookup returns a stale entry: the exact expert checks it at once.
  const decoyed = world.split('train').find((task) => queryOf(exactActions(world, task.id)[1]!).endsWith(' now'));
  if (!decoyed) throw new Error('no task of this world starts with a stale lookup');

  it('asks the same questions, and each stale fact reads as a plausible decoy that its check corrects, in the real corpus_search', async () => {
    expect(world.tasks.map(({ maxSteps, ...task }) => task)).toEqual(plain.tasks);
    const stale = world.corpus.filter((document) => document.id.endsWith('-old'));
    // 24 facts at rate 0.3: a seeded draw, so the count is fixed; each stale value differs from the current one.
    expect(stale.length).toBeGreaterThan(3);
    expect(stale.length).toBeLessThan(14);
    for (const document of plain.corpus) {
      const query = document.title;
      const current = /\d+/.exec(document.text)?.[0];
      const decoy = stale.find((entry) => entry.title === query);
      if (!decoy) {
        expect(await show(query)).toBe(`${query}: ${document.text}`);
        continue;
      }
      expect(await show(query)).toMatch(new RegExp(`^${query}: \\w+ had (\\d+) \\w+ \\(outdated\\)\\.$`));
      expect(/\d+/.exec(decoy.text)?.[0]).not.toBe(current);
      expect(await show(`${query} now`)).toBe(`${query} now: ${document.text.replace(/\.$/, ' now.')}`);
    }
  });

  it('ranks every stale entry first for its plain lookup and the current one for its check, even when every fact is stale', async () => {
    const everywhere = createTaskWorld({ ...settings, decoyRate: 1 });
    expect(everywhere.corpus.filter((document) => document.id.endsWith('-old'))).toHaveLength(24);
    for (const document of plain.corpus) {
      expect(everywhere.lookup(document.title)?.text).toMatch(/ had \d+ .* \(outdated\)\.$/);
      expect(everywhere.lookup(`${document.title} now`)?.text).toBe(document.text.replace(/\.$/, ' now.'));
    }
  });

  it("the expert checks every stale lookup; each task allows its expert's decisions plus the slack", () => {
    let checks = 0;
    for (const demonstration of world.demonstrations) {
      const task = world.task(demonstration.taskId);
      const actions = demonstration.steps.map((step) => step.action);
      demonstration.steps.forEach((step, index) => {
        const stale = step.observation?.split('\n')[1]?.includes('(outdated)') ?? false;
        if (stale) {
          checks++;
          expect(actions[index + 1]).toEqual({ thought: 'check', action: 'corpus_search', action_input: { query: `${queryOf(step.action)} now` } });
        }
        expect(JSON.stringify(step.action).length).toBeLessThan(96);
      });
      expect(task.maxSteps).toBe(actions.length + 1);
      expect(actions.at(-1)?.action_input).toBe(task.answer);
    }
    expect(checks).toBeGreaterThan(5);
    expect(plain.tasks.every((task) => !('maxSteps' in task))).toBe(true);
  });

  it("a decoy that a later lookup corrects ends right when the planner follows the teacher's recovery, and wrong when it is used unchecked", async () => {
    const exact = exactActions(world, decoyed.id);
    const recovered = withWorldRecovery(world, exact, 'decoy', createRandom(1));
    const unchecked = withWorldMistake(world, exact, 'decoy', createRandom(1));
    if (!recovered || !unchecked) throw new Error('the decoy task allows no decoy recovery or mistake');
    // Recovery: the stale value goes into python, then the check, then the code again with the current value.
    expect(recovered.map((action) => action.action)).toEqual([...exact.slice(0, -2).filter((action) => action.thought !== 'check').map(() => 'corpus_search'), 'python', 'corpus_search', 'python', 'finish']);
    const trajectory = await run(decoyed.id, recovered);
    expect(trajectory.steps[0]?.toolResult?.output).toContain('(outdated)');
    expect(trajectory.termination).toBe('finished');
    expect(world.checkAnswer(decoyed.id, trajectory.answer)).toBe(true);
    // The stale value's code printed another number than the answer: the first python step was a bad one.
    const printed = trajectory.steps.filter((step) => step.action?.action === 'python').map((step) => step.toolResult?.output.trim());
    expect(printed).toHaveLength(2);
    expect(printed[0]).not.toBe(decoyed.answer);
    expect(printed[1]).toBe(decoyed.answer);

    const wrong = await run(decoyed.id, unchecked);
    expect(wrong.steps.some((step) => (step.action ? queryOf(step.action).endsWith(' now') : false))).toBe(false);
    expect(wrong.termination).toBe('finished');
    expect(world.checkAnswer(decoyed.id, wrong.answer)).toBe(false);
    expect(wrong.answer).toBe(String(evaluateWorldCode((unchecked.at(-2)!.action_input as { code: string }).code)));
  });

  it("a python error names what is wrong and the retry fixes it; one wasted decision more than the slack ends the run unanswered", async () => {
    const exact = exactActions(world, decoyed.id);
    const retried = withWorldRecovery(world, exact, 'python', createRandom(2))!;
    const trajectory = await run(decoyed.id, retried);
    const [failed, fixed] = trajectory.steps.filter((step) => step.action?.action === 'python');
    expect(failed?.toolResult?.error).toMatch(/NameError: name '[A-Z][a-z]+_(cats|dogs|hens)' is not defined/);
    expect(fixed?.toolResult?.error).toBeUndefined();
    expect(world.checkAnswer(decoyed.id, trajectory.answer)).toBe(true);
    // Both recoveries in one run: two decisions past the expert's, one past the budget.
    const both = withWorldRecovery(world, withWorldRecovery(world, exact, 'decoy', createRandom(1))!, 'python', createRandom(2))!;
    expect(both).toHaveLength(decoyed.maxSteps! + 1);
    const late = await run(decoyed.id, both);
    expect(late.termination).toBe('max_steps');
    expect(late.steps).toHaveLength(decoyed.maxSteps!);
    expect(world.checkAnswer(decoyed.id, late.answer)).toBe(false);
  });

  it('the teacher recovers and errs about as often as asked: recoveries answer right one decision later, decoy mistakes answer wrong', () => {
    const teach = createWorldTeacher(world, { errorRate: 0.2, mistakes: ['decoy'], recoveryRate: 0.5, random: createRandom(4) });
    const taught = world.split('train').map((task) => ({ task, exact: exactActions(world, task.id), demonstration: teach(task.id) }));
    const recovered = taught.filter(({ exact, demonstration }) => !demonstration.exact && demonstration.actions.length === exact.length + 1);
    const flawed = taught.filter(({ exact, demonstration }) => !demonstration.exact && demonstration.actions.length === exact.length - 1);
    expect(recovered.length + flawed.length).toBe(taught.filter(({ demonstration }) => !demonstration.exact).length);
    // Half of 40 recover; decoy mistakes only where a lookup was stale (under 0.2 of 40).
    expect(recovered.length).toBeGreaterThan(12);
    expect(recovered.length).toBeLessThan(28);
    expect(flawed.length).toBeGreaterThan(0);
    expect(flawed.length).toBeLessThan(9);
    for (const { task, demonstration } of recovered) expect(demonstration.actions.at(-1)?.action_input).toBe(task.answer);
    for (const { task, demonstration } of flawed) {
      expect(parseWorldActions(demonstration.actions)?.lookups.some((lookup) => lookup.check)).toBe(false);
      expect(world.checkAnswer(task.id, demonstration.actions.at(-1)?.action_input)).toBe(false);
    }
    // A wrong lookup that lands on a stale entry is checked, as the expert checks, and the code uses what the check found.
    const wrongLookups = createWorldTeacher(world, { errorRate: 1, mistakes: ['lookup'], random: createRandom(5) });
    let checkedWrong = 0;
    for (const task of world.split('train')) {
      const parsed = parseWorldActions(wrongLookups(task.id).actions)!;
      parsed.lookups.forEach((lookup, index) => {
        const shown = world.lookup(queryOf(lookup.check ?? lookup.search))?.text;
        expect(shown).not.toContain('(outdated)');
        expect(parsed.numbers[index]).toBe(/\d+/.exec(shown ?? '')?.[0]);
        if (lookup.check && !exactActions(world, task.id).some((action) => queryOf(action) === queryOf(lookup.check!))) checkedWrong++;
      });
    }
    expect(checkedWrong).toBeGreaterThan(0);
    const kinds = new Set(recovered.map(({ demonstration }) => (demonstration.actions.filter((action) => action.thought === 'check').length > 0 ? 'decoy' : 'python')));
    expect(kinds).toEqual(new Set(['decoy', 'python']));
    expect(() => createWorldTeacher(world, { errorRate: 0.6, recoveryRate: 0.5, random: createRandom(0) })).toThrow(/add up to more than 1/);
    expect(() => createWorldTeacher(world, { errorRate: 0, recoveryRate: -0.1, random: createRandom(0) })).toThrow(/recoveryRate must be in \[0, 1\], got -0.1/);
  });

  it('is deterministic in its seed, decoys included', () => {
    const again = createTaskWorld({ ...settings, decoyRate: 0.3, stepSlack: 1 });
    expect(worldHash(again)).toBe(worldHash(world));
    expect(createTaskWorld({ ...settings, seed: 4, decoyRate: 0.3, stepSlack: 1 }).corpus).not.toEqual(world.corpus);
    expect(() => createTaskWorld({ decoyRate: 1.5 })).toThrow(/decoyRate: Too big/);
    expect(() => createTaskWorld({ stepSlack: -1 })).toThrow(/stepSlack: Too small/);
  });
});
