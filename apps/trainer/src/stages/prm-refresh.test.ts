import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { createRefreshablePrm } from './prm-refresh';

const contextWith = (refreshAt: number[], totalSteps: number) => {
  const root = mkdtempSync(join(tmpdir(), 'prm-refresh-'));
  return { config: { device: 'cpu', prm: { refreshAt, scoringBatchSize: 16 }, train: { totalSteps } }, run: { root, paths: { checkpoints: join(root, 'checkpoints') } } } as unknown as PipelineContext;
};

describe('the DAPO stage\'s refreshable PRM', () => {
  it('refreshes at the steps below totalSteps, in order, once each', () => {
    expect(createRefreshablePrm(contextWith([20, 10, 10, 30, 45], 30)).refreshSteps).toEqual([10, 20]);
  });

  it('makes a missing refresh at the step it is due, and refuses one whose policy is gone (refreshAt changed on --resume)', async () => {
    const made: number[] = [];
    const prm = createRefreshablePrm(contextWith([10], 30));
    // Due now: made first (this stand-in writes no checkpoint, so loading it then fails).
    await expect(prm.use(10, async (step) => void made.push(step))).rejects.toThrow();
    expect(made).toEqual([10]);
    // Resumed at step 12 without it: refused, naming the step and what to do.
    const error = await prm.use(12, async (step) => void made.push(step)).catch((caught: unknown) => caught);
    expect(AgentFlowError.hasCode(error, 'INVALID_CONFIG')).toBe(true);
    expect((error as Error).message).toMatch(/^prm\.refreshAt names DAPO step 10, but this run resumes at step 12 without that refresh .*Remove 10 from prm\.refreshAt/);
    expect(made).toEqual([10]);
  });
});
