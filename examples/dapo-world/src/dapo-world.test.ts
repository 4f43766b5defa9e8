import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { trainOnWorld } from './dapo-world.js';

// The example as a test: DAPO on the embedded world from the packages alone, no trainer app.
describe('DAPO on the embedded world, from package code alone', () => {
  it('warm-starts the planner on the teacher, then takes two DAPO steps on its own rollouts that move it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dapo-world-test-'));
    const lines: string[] = [];
    try {
      const result = await trainOnWorld(dir, (line) => lines.push(line));
      expect(lines).toEqual([`warm start: ${result.samples} samples, 8 epochs`, 'DAPO step 1 done', 'DAPO step 2 done']);
      // Every training task's demonstration, one sample per decision (2 searches, python, finish).
      expect(result.samples).toBe(48 * 4);
      expect(result.steps).toBe(2);
      // At least two groups of four per step, each rollout a run of the agent with the policy's token ids.
      expect(result.trajectories.length).toBeGreaterThanOrEqual(16);
      for (const trajectory of result.trajectories) {
        expect(trajectory.steps.length).toBeGreaterThan(0);
        expect(trajectory.steps.every((step) => (step.completionTokenIds?.length ?? 0) > 0)).toBe(true);
      }
      // Each step kept two groups whose rewards differ: some rollouts answered right, some wrong.
      const rewards = await Promise.all(result.trajectories.map((trajectory) => result.source.reward(result.source.item(trajectory.taskId!), trajectory.answer ?? undefined)));
      expect(new Set(rewards)).toEqual(new Set([0, 1]));
      const moved = [...result.trained.matrices].filter(([key, { b }]) => b.some((value, index) => value !== result.warm.matrices.get(key)?.b[index]));
      expect(moved.length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
