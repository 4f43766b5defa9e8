import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChatRequest, type LanguageModel, openRunDirectory } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { runConfigSchema } from '../config/schema';
import { createRunAgent } from './agent';
import { createPipelineContext } from './pipeline-context';

/** A planner that finishes at once with `answer`, recording every prompt it was sent. */
function finishingModel(answer: string, prompts: string[]): LanguageModel {
  return {
    specificationVersion: 'v1',
    provider: 'scripted',
    modelId: 'scripted',
    chat: async (request: ChatRequest) => {
      prompts.push(request.messages.map((message) => message.content).join('\n'));
      return { text: JSON.stringify({ thought: '', action: 'finish', action_input: answer }), finishReason: 'stop', model: 'scripted' };
    },
  };
}

describe('memory.crossTask in a run', () => {
  it('keeps a solved training task in the run directory and shows it to the next run of a similar question', async () => {
    const run = openRunDirectory(join(mkdtempSync(join(tmpdir(), 'agentflow-memory-')), 'run'));
    const config = runConfigSchema.parse({
      task: { kind: 'world', trainTasks: 20, testTasks: 4 },
      policy: { prompt: { kind: 'full' } },
      memory: { crossTask: { kind: 'sqlite' }, k: 1 },
    });
    const context = await createPipelineContext(config, run, () => {});
    try {
      expect(context.crossTask).toBeDefined();
      const item = context.source.split('train')[0]!;
      const prompts: string[] = [];
      const agent = createRunAgent(context, finishingModel(item.answer, prompts));
      const first = await agent.run(item.question, { taskId: item.id, trajectoryId: 'first', seed: 1 });
      expect(prompts[0]).not.toContain('Solved examples');
      expect(await context.crossTask?.remember(first, await context.source.reward(item, first.answer ?? undefined))).toBe(true);
      await agent.run(item.question, { taskId: item.id, trajectoryId: 'second', seed: 2 });
      expect(prompts[1]).toContain(`Solved examples of similar questions:\nExample 1\nQuestion: ${item.question}`);
      expect(prompts[1]).toContain(`Answer: ${item.answer}`);
      expect(existsSync(join(run.root, 'memory.sqlite'))).toBe(true);
    } finally {
      await context.tools.dispose();
      await context.crossTask?.close();
    }
  });

  it('is off by default: no store, and prompts depend on the question alone', async () => {
    const run = openRunDirectory(join(mkdtempSync(join(tmpdir(), 'agentflow-memory-')), 'run'));
    const context = await createPipelineContext(runConfigSchema.parse({ task: { kind: 'world', trainTasks: 20, testTasks: 4 } }), run, () => {});
    expect(context.crossTask).toBeUndefined();
    expect(existsSync(join(run.root, 'memory.sqlite'))).toBe(false);
    await context.tools.dispose();
  });

  it('refuses vector and hybrid retrieval, which need an embedder a config cannot name yet', () => {
    const result = runConfigSchema.safeParse({ memory: { crossTask: { kind: 'sqlite' }, mode: 'vector' } });
    expect(result.error?.issues[0]?.path).toEqual(['memory', 'mode']);
  });
});
