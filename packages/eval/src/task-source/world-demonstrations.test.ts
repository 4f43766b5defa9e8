import { type DemonstrationSample, createAgent, demonstrationSamples } from '@agentflow/flow';
import { afterAll, describe, expect, it } from 'vitest';
import { createTaskWorld } from '../task-world/create-task-world';
import { evaluateWorldCode, type WorldTeacherMistake } from '../task-world/world-teacher';
import { createWorldTaskSource } from './world-task-source';

// The world's teacher replayed through the agent loop with the world's real tools, as a warm start does.
const world = createTaskWorld({ seed: 3, entities: 8, trainTasks: 40, testTasks: 4, levels: [1, 2], maxValue: 9 });
const tools = createWorldTaskSource(world).createTools({ pythonSlots: 2 });
const agentOf = (model: Parameters<typeof createAgent>[0]['model']) => createAgent({ model, tools: tools.tools, actionSchemaStyle: 'tied', maxRepairs: 0, maxSteps: 8 });
afterAll(() => tools.dispose());

/** The samples of the world's training split, from the exact expert or a teacher with `kind` mistakes at rate 0.5. */
function samplesOf(teacher?: { kind: WorldTeacherMistake; seed: number }) {
  const source = createWorldTaskSource(world, teacher ? { teacher: { errorRate: 0.5, mistakes: [teacher.kind], seed: teacher.seed } } : {});
  return demonstrationSamples(source.split('train'), source, agentOf);
}

/** The queries and code of each task's demonstration and the answer of its finish step, from the samples. */
function codeAndAnswer(samples: readonly DemonstrationSample[]) {
  const byTask = new Map<string, { queries: string[]; code?: string; answer?: string }>();
  for (const sample of samples) {
    const action = JSON.parse(sample.completion) as { action: string; action_input: unknown };
    const entry = byTask.get(sample.taskId) ?? { queries: [] };
    if (action.action === 'corpus_search') entry.queries.push((action.action_input as { query: string }).query);
    if (action.action === 'python') entry.code = (action.action_input as { code: string }).code;
    if (action.action === 'finish') entry.answer = String(action.action_input);
    byTask.set(sample.taskId, entry);
  }
  return byTask;
}

const factValue = (query: string) => Number(/\d+/.exec(world.corpus.find((document) => document.title === query)?.text ?? '')?.[0]);

/** The exact expert's demonstrations and those with `kind` mistakes at rate 0.5, by task. */
async function exactAndFlawed(kind: WorldTeacherMistake, seed: number) {
  const exact = codeAndAnswer(await samplesOf());
  const flawed = codeAndAnswer(await samplesOf({ kind, seed }));
  return { exact, flawed };
}

describe("the world's demonstrations replayed through the agent loop", () => {
  it('replays the exact expert by default: every demonstration answers its task', async () => {
    const byTask = codeAndAnswer(await samplesOf());
    expect(byTask.size).toBe(40);
    for (const [taskId, { answer }] of byTask) expect(world.checkAnswer(taskId, answer ?? '')).toBe(true);
  });

  it('operator mistakes compute with another operator and answer what that code printed', async () => {
    const { exact, flawed: noisy } = await exactAndFlawed('operator', 1);
    let changed = 0;
    for (const [taskId, { queries, code, answer }] of noisy) {
      const original = exact.get(taskId)!;
      expect(queries).toEqual(original.queries);
      if (code === original.code) {
        expect(world.checkAnswer(taskId, answer ?? '')).toBe(true);
        continue;
      }
      changed++;
      // Same operands, other operators; the answer is what Python printed for that code.
      expect(code?.split(/[-+*]/)).toEqual(original.code?.split(/[-+*]/));
      expect(answer).toBe(String(evaluateWorldCode(code ?? '')));
    }
    // Half of 40 tasks on average; a seeded draw, so the count is fixed.
    expect(changed).toBeGreaterThan(10);
    expect(changed).toBeLessThan(30);
  });

  it('lookup mistakes ask for another counted thing of the same entity and compute with what they found', async () => {
    const { exact, flawed: noisy } = await exactAndFlawed('lookup', 2);
    let changed = 0;
    for (const [taskId, { queries, code, answer }] of noisy) {
      const original = exact.get(taskId)!;
      const differing = queries.flatMap((query, index) => (query === original.queries[index] ? [] : [index]));
      if (differing.length === 0) {
        expect(world.checkAnswer(taskId, answer ?? '')).toBe(true);
        continue;
      }
      changed++;
      expect(differing).toHaveLength(1);
      const index = differing[0]!;
      const [entity, attribute] = queries[index]!.split(' ');
      expect(entity).toBe(original.queries[index]!.split(' ')[0]);
      expect(attribute).not.toBe(original.queries[index]!.split(' ')[1]);
      // The code uses the count that lookup found, in the same place.
      expect(code?.split(/[-+*]/)[index]).toBe(String(factValue(queries[index]!)));
      expect(answer).toBe(String(evaluateWorldCode(code ?? '')));
    }
    expect(changed).toBeGreaterThan(10);
  });
});

describe('evaluateWorldCode', () => {
  it('computes as Python does, products first', () => {
    expect([evaluateWorldCode('5-3'), evaluateWorldCode('3*9'), evaluateWorldCode('2+3+4'), evaluateWorldCode('2+3*4'), evaluateWorldCode('3-7')]).toEqual([2, 27, 9, 14, -4]);
  });
});
