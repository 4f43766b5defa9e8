import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, openRunDirectory, type Trajectory } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { openRun } from '../pipeline/open-run';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { labelStage } from '../stages/label';
import { runConfigSchema } from './schema';

// A run directory's config.json and state.json are read back on --resume: a corrupt one is an
// INVALID_CONFIG naming the file and the key (exit 2), never a raw SyntaxError or ZodError.

const root = mkdtempSync(join(tmpdir(), 'run-directory-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

function startedRun(): string {
  const out = join(root, `run-${runs++}`);
  openRun({ out }).run.close();
  return out;
}

function resumeError(out: string): AgentFlowError {
  try {
    openRun({ resume: out }).run.close();
  } catch (error) {
    expect(AgentFlowError.isInstance(error), String(error)).toBe(true);
    return error as AgentFlowError;
  }
  throw new Error(`--resume ${out} was accepted`);
}

describe('a run directory whose files are corrupt', () => {
  it('names config.json and the JSON error when it is not JSON', () => {
    const out = startedRun();
    writeFileSync(join(out, 'config.json'), '{"seed": 1,');
    const error = resumeError(out);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toMatch(new RegExp(`^${join(out, 'config.json')}: not valid JSON: `));
  });

  it('names config.json, the key, what was expected and what was found', () => {
    const out = startedRun();
    writeFileSync(join(out, 'config.json'), JSON.stringify({ seed: 'seven', policy: { maxSteps: -1 } }));
    const error = resumeError(out);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain(`${join(out, 'config.json')}: seed: Invalid input: expected number, received string, found "seven"`);
    expect(error.message).toContain(`${join(out, 'config.json')}: policy.maxSteps: Too small: expected number to be >0, found -1`);
  });

  it('names state.json and the key when it is not JSON, or not a state', () => {
    const out = startedRun();
    writeFileSync(join(out, 'state.json'), '{"version": 1, "stages": ');
    let error = resumeError(out);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toMatch(new RegExp(`^${join(out, 'state.json')}: not valid JSON: `));
    writeFileSync(join(out, 'state.json'), JSON.stringify({ version: 1, createdAt: 'x', stages: { collect: { finishedAt: 3 } } }));
    error = resumeError(out);
    expect(error.message).toBe(`${join(out, 'state.json')}: stages.collect.finishedAt: Invalid input: expected string, received number, found 3`);
    writeFileSync(join(out, 'state.json'), 'null');
    expect(resumeError(out).message).toMatch(/state\.json: version: Invalid input: expected 1, found undefined/);
  });

  it('the label stage says that collect yielded no steps, instead of a missing labels.jsonl later', async () => {
    const run = openRunDirectory(join(root, 'empty-collect'));
    const trajectory = { id: 'collect-train-0-0', question: 'q', steps: [], answer: null, termination: 'error' } as unknown as Trajectory;
    writeFileSync(run.paths.trajectories, `${JSON.stringify(trajectory)}\n`);
    const context = { config: runConfigSchema.parse({}), run } as unknown as PipelineContext;
    await expect(labelStage.run(context, () => {})).rejects.toThrow(
      /label: the collect stage yielded no planner steps to label \(1 trajectories in .*trajectories\.jsonl, ended by error\)/,
    );
  });
});
