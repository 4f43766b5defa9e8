import { AgentFlowError, type Demonstration, type LanguageModel, type PlannerAction, type Tool } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../agent/create-agent';
import { type DemonstratedItem, demonstrationSamples } from './demonstration-samples';

const populations: Record<string, number> = { Brisk: 5120, Veloria: 88_000 };

const lookup: Tool<{ city: string }> = {
  name: 'lookup_population',
  description: 'Returns the population of a city.',
  inputSchema: z.object({ city: z.string().describe('City name') }),
  async execute({ city }) {
    return { output: String(populations[city] ?? 'unknown'), truncated: false, durationMs: 0 };
  },
};

const items: DemonstratedItem[] = [
  { id: 'brisk', question: 'What is the population of Brisk?', answer: '5120' },
  { id: 'veloria', question: 'What is the population of Veloria?', answer: '88000' },
  { id: 'nowhere', question: 'What is the population of Nowhere?', answer: '0' },
];

const step = (city: string, answer: string): PlannerAction[] => [
  { thought: `look up ${city}`, action: 'lookup_population', action_input: { city } },
  { thought: 'done', action: 'finish', action_input: answer },
];

/** A source whose teacher demonstrates Brisk and Veloria (the latter with `veloria`), and nothing for Nowhere. */
function sourceWith(veloria: Demonstration) {
  const asked: string[] = [];
  return {
    asked,
    source: {
      demonstration(item: DemonstratedItem): Demonstration | undefined {
        asked.push(item.id);
        if (item.id === 'brisk') return { actions: step('Brisk', '5120'), exact: true };
        return item.id === 'veloria' ? veloria : undefined;
      },
      reward: async (item: DemonstratedItem, answer: string | undefined) => (answer === item.answer ? 1 : 0),
    },
  };
}

const agentOf = (model: Parameters<typeof createAgent>[0]['model']) => createAgent({ model, tools: [lookup], maxRepairs: 0 });

describe('demonstrationSamples', () => {
  it("replays each demonstration through the loop: one sample per decision, later prompts showing the real tools' outputs", async () => {
    const { source, asked } = sourceWith({ actions: step('Veloria', '88000'), exact: true });
    const samples = await demonstrationSamples(items, source, agentOf);
    expect(asked).toEqual(['brisk', 'veloria', 'nowhere']);
    expect(samples.map((sample) => sample.taskId)).toEqual(['brisk', 'brisk', 'veloria', 'veloria']);
    expect(samples.map((sample) => JSON.parse(sample.completion))).toEqual([...step('Brisk', '5120'), ...step('Veloria', '88000')]);
    const prompt = (index: number) => samples[index]!.prompt.map((message) => message.content).join('\n');
    expect(prompt(0)).toContain('What is the population of Brisk?');
    expect(prompt(0)).not.toContain('5120');
    expect(prompt(1)).toContain('5120');
    expect(prompt(3)).toContain('88000');
  });

  it("keeps a flawed demonstration's samples, and refuses an exact one that misses its answer", async () => {
    const flawed = await demonstrationSamples(items, sourceWith({ actions: step('Veloria', '88001'), exact: false }).source, agentOf);
    expect(flawed.filter((sample) => sample.taskId === 'veloria')).toHaveLength(2);
    await expect(demonstrationSamples(items, sourceWith({ actions: step('Veloria', '88001'), exact: true }).source, agentOf)).rejects.toThrow(
      'The demonstration of veloria answered "88001" instead of 88000; its tool outputs were ["88000",null].',
    );
  });

  it('gives no samples for a source without demonstrations', async () => {
    expect(await demonstrationSamples(items, { reward: async () => 1 }, agentOf)).toEqual([]);
  });

  it('says why a demonstration did not finish, e.g. a fixed verifier that does not answer, instead of blaming the source', async () => {
    const down: LanguageModel = {
      specificationVersion: 'v1',
      provider: 'ollama',
      modelId: 'judge',
      async chat() {
        throw new AgentFlowError({ code: 'HTTP_ERROR', message: 'POST http://127.0.0.1:9/api/chat failed after 1 attempt(s); change the url' });
      },
    };
    const withVerifier = (model: LanguageModel) => createAgent({ model, tools: [lookup], maxRepairs: 0, fixedModules: { verifierModel: down } });
    const error = await demonstrationSamples(items, sourceWith({ actions: step('Veloria', '88000'), exact: true }).source, withVerifier).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'RUNTIME_ERROR' });
    expect((error as Error).message).toMatch(/^The demonstration of brisk did not finish \(error\): .*POST http:\/\/127\.0\.0\.1:9\/api\/chat failed/);
  });
});
