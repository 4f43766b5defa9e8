/**
 * `agentflow run` with full-parameter training (`warmStart.trainable` and `train.trainable`
 * full) on the shortened embedded default, through the built CLI: the checkpoints are Hugging
 * Face folders, and a run killed with SIGKILL in the warm start or in DAPO resumes with no
 * epoch or step lost or repeated.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonl } from '@agentflow/core';
import { loadModel } from '@agentflow/models';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSummarySchema } from '@agentflow/eval';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'short-run.yaml');
const EPOCHS = 6;
const STEPS = 4;
// Every weight trains in both phases, at the learning rates the trainer README gives for full
// training: the warm start's own (the fixture's 1e-2), DAPO's 1e-4.
const FULL = [`warmStart.epochs=${EPOCHS}`, `train.totalSteps=${STEPS}`, 'warmStart.trainable.kind=full', 'train.trainable.kind=full', 'train.learningRate=0.0001'].flatMap(
  (override) => ['--set', override],
);

interface CliResult {
  status: number | null;
  stderr: string;
  /** Whether `killWhen` held and the run was killed with SIGKILL. */
  killed: boolean;
}

/** Runs the CLI; with `killWhen`, kills it with SIGKILL as soon as `killWhen(out)` holds (checked every 20 ms). */
function agentflow(args: string[], settings: { out?: string; killWhen?: (out: string) => boolean } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = settings.killWhen
      ? setInterval(() => {
          if (!killed && settings.out && settings.killWhen?.(settings.out)) {
            killed = true;
            child.kill('SIGKILL');
          }
        }, 20)
      : undefined;
    child.on('error', reject);
    child.on('exit', (status) => {
      if (timer) clearInterval(timer);
      resolve({ status, stderr, killed });
    });
  });
}

type Stages = Record<string, { finishedAt: string; result?: Record<string, unknown> }>;
const stagesOf = (dir: string): Stages => (existsSync(join(dir, 'state.json')) ? (JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { stages: Stages }).stages : {});
const readJson = <T>(path: string): T | undefined => {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined; // not written yet, or being replaced
  }
};
interface Row {
  stage: string;
  step: number;
  loss?: number;
}
const rowsOf = (dir: string, stage: string) => readJsonl<Row>(join(dir, 'metrics.jsonl')).filter((row) => row.stage === stage);
const steps = (count: number) => Array.from({ length: count }, (_, index) => index + 1);
const newRun = (name: string) => join(mkdtempSync(join(tmpdir(), `agentflow-full-${name}-`)), 'run');

/** The uninterrupted run's warm-start losses, which a resumed warm start must reproduce. */
let uninterruptedLosses: number[] | undefined;

describe('agentflow run with full-parameter training in the warm start and in DAPO', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
  });

  it('runs every stage and writes Hugging Face folders for the warm and the final planner', async () => {
    const out = newRun('run');
    const result = await agentflow(['run', '--config', config, '--out', out, '--quiet', ...FULL]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const summary = runSummarySchema.parse(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')));
    expect(summary.after.total).toBe(12);
    const checkpoints = join(out, 'checkpoints');
    for (const name of ['policy-warm', 'policy-final']) {
      const dir = join(checkpoints, name);
      for (const file of ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) expect(existsSync(join(dir, file)), `${name}/${file}`).toBe(true);
      expect(existsSync(join(dir, 'adapter_config.json'))).toBe(false);
    }
    const [planner, warm, final] = await Promise.all([loadModel(join(out, 'models', 'policy')), loadModel(join(checkpoints, 'policy-warm')), loadModel(join(checkpoints, 'policy-final'))]);
    expect([...warm.weights.keys()]).toEqual([...planner.weights.keys()]);
    expect(final.config).toEqual(warm.config);
    // The warm start moved every weight of the planner, and DAPO moved the warm one's.
    const moved = (from: typeof warm, to: typeof warm) => [...from.weights].filter(([name, tensor]) => tensor.data.some((value, index) => value !== to.weights.get(name)!.data[index])).length;
    expect(moved(planner, warm)).toBe(planner.weights.size);
    expect(moved(warm, final)).toBeGreaterThan(0);
    // The warm planner is its checkpoint folder: nothing merged; DAPO's checkpoints are model folders too.
    expect(existsSync(join(out, 'models', 'planner-warm'))).toBe(false);
    expect(existsSync(join(checkpoints, 'dapo', `step-00000${STEPS}`, 'policy', 'model.safetensors'))).toBe(true);
    expect(rowsOf(out, 'train').map((row) => row.step)).toEqual(steps(STEPS));
    uninterruptedLosses = rowsOf(out, 'warm-start').map((row) => row.loss!);
    expect(uninterruptedLosses).toHaveLength(EPOCHS);
  }, 120_000);

  it('resumes a run killed with SIGKILL in the middle of the warm start, then in the middle of DAPO: every epoch and step once, the losses of a run without kills', async () => {
    const out = newRun('kills');
    const inWarmStart = await agentflow(['run', '--config', config, '--out', out, '--quiet', ...FULL], {
      out,
      // Two epochs logged (a line being written is read again at the next poll).
      killWhen: (dir) => {
        try {
          return existsSync(join(dir, 'metrics.jsonl')) && rowsOf(dir, 'warm-start').length >= 2;
        } catch {
          return false;
        }
      },
    });
    expect(inWarmStart.killed).toBe(true);
    expect(stagesOf(out)['warm-start']).toBeUndefined();
    const epochsBefore = rowsOf(out, 'warm-start').length;
    expect(epochsBefore).toBeGreaterThanOrEqual(2);
    expect(epochsBefore).toBeLessThan(EPOCHS);

    // Resumed, and killed again once a DAPO checkpoint is written: the kill lands in the step after it.
    const inDapo = await agentflow(['run', '--resume', out, '--quiet'], {
      out,
      killWhen: (dir) => (readJson<{ step: number }>(join(dir, 'checkpoints', 'dapo', 'latest.json'))?.step ?? 0) >= 1,
    });
    expect(inDapo.killed).toBe(true);
    const before = stagesOf(out);
    // The warm start, resumed from the epoch's model folder with its optimiser state: the losses of an uninterrupted run.
    const rows = rowsOf(out, 'warm-start');
    expect(rows.map((row) => row.step)).toEqual(steps(EPOCHS));
    if (uninterruptedLosses) for (const [index, row] of rows.entries()) expect(row.loss).toBeCloseTo(uninterruptedLosses[index]!, 4);
    expect(before['warm-start']?.result).toMatchObject({ epochs: EPOCHS, check: { ok: true } });
    expect(before['train-prm']).toBeDefined();
    expect(before.train).toBeUndefined();
    const checkpointed = readJson<{ step: number }>(join(out, 'checkpoints', 'dapo', 'latest.json'))!.step;
    expect(checkpointed).toBeLessThan(STEPS);
    // Rows are written once a checkpoint holds their steps: all of them, or (killed between the
    // checkpoint and its commit) those of the checkpoint before, which the resume then delivers.
    const recorded = rowsOf(out, 'train').map((row) => row.step);
    expect(steps(checkpointed).slice(0, recorded.length)).toEqual(recorded);

    const resumed = await agentflow(['run', '--resume', out, '--quiet']);
    expect(resumed.stderr).toBe('');
    expect(resumed.status).toBe(0);
    const after = stagesOf(out);
    for (const [stage, { finishedAt }] of Object.entries(before)) expect(after[stage]?.finishedAt).toBe(finishedAt);
    expect(after.train?.result).toMatchObject({ steps: STEPS, resumedAt: checkpointed });
    expect(rowsOf(out, 'train').map((row) => row.step)).toEqual(steps(STEPS));
    expect(rowsOf(out, 'eval').map((row) => row.step)).toEqual(steps(STEPS));
    expect(rowsOf(out, 'warm-start').map((row) => row.step)).toEqual(steps(EPOCHS));
    expect((await loadModel(join(out, 'checkpoints', 'policy-final'))).weights.size).toBeGreaterThan(0);
  }, 180_000);
});
