import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crossTaskMemoryConfigSchema, openCrossTaskMemory } from './cross-task-memory-config';

describe('crossTaskMemoryConfigSchema and openCrossTaskMemory', () => {
  it('is off by default, and a sqlite block opens the default file, which keeps a solved task', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentflow-memory-config-'));
    const defaultSqlitePath = join(dir, 'memory.sqlite');
    expect(await openCrossTaskMemory(crossTaskMemoryConfigSchema.parse({}), { defaultSqlitePath })).toBeUndefined();
    const memory = await openCrossTaskMemory(crossTaskMemoryConfigSchema.parse({ crossTask: { kind: 'sqlite' }, k: 1 }), { defaultSqlitePath });
    expect(memory).toBeDefined();
    const trajectory = {
      id: 't1',
      taskId: 'train-1',
      question: 'What is the capital of France?',
      steps: [],
      answer: 'Paris',
      termination: 'finished' as const,
    };
    expect(await memory!.remember(trajectory as never, 1)).toBe(true);
    expect(await memory!.examplesFor('What is the capital of France?')).toContain('Paris');
    await memory!.close();
    expect(existsSync(defaultSqlitePath)).toBe(true);
  });

  it('refuses the modes that need an embedder, naming the key', () => {
    const parsed = crossTaskMemoryConfigSchema.safeParse({ mode: 'vector' });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]).toMatchObject({ path: ['mode'], message: expect.stringContaining('need an embedder') });
  });
});
