import { createRandom } from '@agentflow/core';
import { createTaskWorld, createWorldTaskSource, createWorldTeacher, evaluateWorldCode } from '@agentflow/eval';
import { afterAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../config/schema';
import { createRunAgent } from '../pipeline/agent';
import { demonstrationSamples } from './demonstration-samples';

// The world's imperfect teacher (in @agentflow/eval) replayed through the configured agent loop, as the warm start does.
const world = createTaskWorld({ seed: 3, entities: 8, trainTasks: 40, testTasks: 4, levels: [1, 2], maxValue: 9 });
const source = createWorldTaskSource(world);
const tools = source.createTools({ pythonSlots: 2 });
const config = runConfigSchema.parse({});
const agentOf = (model: Parameters<typeof createRunAgent>[1]) => createRunAgent({ config, tools, fixedModel: undefined }, model);
afterAll(() => tools.dispose());

type Errors = { rate: number; kinds: Array<'operator' | 'lookup'>; random: ReturnType<typeof createRandom> };

/** The samples of the world's training split, from the exact expert or an imperfect teacher. */
function samplesOf(errors?: Errors) {
  const teacher = createWorldTeacher(world, { errorRate: errors?.rate ?? 0, mistakes: errors?.kinds ?? ['lookup'], random: errors?.random ?? createRandom(0) });
  return demonstrationSamples(source.split('train'), source, (item) => teacher(item.id), agentOf);
}

/** The queries and code of each task's demonstration and the answer of its finish step, from the samples. */
function codeAndAnswer(samples: Awaited<ReturnType<typeof samplesOf>>) {
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
async function exactAndFlawed(kind: 'operator' | 'lookup', seed: number) {
  const exact = codeAndAnswer(await samplesOf());
  const flawed = codeAndAnswer(await samplesOf({ rate: 0.5, kinds: [kind], random: createRandom(seed) }));
  return { exact, flawed };
}

describe('demonstrationSamples', () => {
  it('replays the exact expert by default: every demonstration answers its task', async () => {
    const samples = await samplesOf();
    const byTask = codeAndAnswer(samples);
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

