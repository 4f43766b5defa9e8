import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandom } from '@agentflow/core';
import type { PrmExample } from '@agentflow/prm';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerPrmCommand } from '../prm';
import { registerTrainPrmCommand } from '../train-prm';

/** Steps whose label follows the tool of the decision: python good, search poor, finish middling. */
function examples(trajectories: number, seed: number): PrmExample[] {
  const random = createRandom(seed);
  const labels = { python: 0.9, search: 0.15, finish: 0.5 } as const;
  const out: PrmExample[] = [];
  for (let t = 0; t < trajectories; t++) {
    for (let stepIndex = 0; stepIndex < 3; stepIndex++) {
      const tool = random.choice(['python', 'search', 'finish'] as const);
      out.push({
        id: `${seed}-${t}:${stepIndex}`,
        trajectoryId: `${seed}-${t}`,
        taskId: `task-${t % 8}`,
        stepIndex,
        question: `Compute ${random.int(2, 999)} plus ${random.int(2, 999)}.`,
        history: [],
        action: { thought: `use ${tool}`, action: tool, action_input: tool === 'python' ? { code: `${random.int(1, 99)}+1` } : `${random.int(1, 999)}` },
        outcomeReward: random.next() < 0.5 ? 1 : 0,
        label: labels[tool],
        provenance: { labeller: 'judge', judgeModel: 'synthetic' },
      });
    }
  }
  return out;
}

function writeJsonl(path: string, records: readonly unknown[]): void {
  writeFileSync(path, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
}

async function runCli(args: string[]) {
  const out: string[] = [];
  const io = { stdout: (text: string) => out.push(text), stderr: () => {} };
  const program = new Command('agentflow').exitOverride();
  registerTrainPrmCommand(program, io);
  registerPrmCommand(program, io);
  await program.parseAsync(['node', 'agentflow', ...args]);
  return out.join('');
}

describe('agentflow train-prm and agentflow prm eval', () => {
  it('trains a tiny PRM that beats the constant predictor on held-out steps, and reports every metric', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentflow-prm-'));
    writeJsonl(join(dir, 'train.jsonl'), examples(60, 1));
    writeJsonl(join(dir, 'test.jsonl'), examples(20, 2));
    const out = join(dir, 'prm');
    const summary = JSON.parse(
      await runCli(['train-prm', '--data', join(dir, 'train.jsonl'), '--out', out, '--device', 'cpu', '--epochs', '150', '--patience', '20']),
    );
    expect(summary).toMatchObject({ examples: 180, out });
    expect(summary.validationExamples).toBeGreaterThan(0);
    expect(existsSync(join(out, 'prm-config.json')) && existsSync(join(out, 'prm-head.safetensors'))).toBe(true);
    expect(readFileSync(join(out, 'training-log.jsonl'), 'utf8').trim().split('\n')).toHaveLength(summary.epochs);

    const report = JSON.parse(await runCli(['prm', 'eval', '--prm', out, '--data', join(dir, 'test.jsonl'), '--device', 'cpu']));
    console.log(JSON.stringify({ summary, report }));
    expect(report.examples).toBe(60);
    expect(report.mse).toBeLessThan(0.5 * report.constantPredictorMse);
    expect(report.pearson).toBeGreaterThan(0.7);
    expect(report.spearman).toBeGreaterThan(0.7);
    expect(report.bestOfN.min.groups).toBe(8);
    expect(report.firstError).toHaveProperty('f1');
  });

  it('names a missing checkpoint clearly', async () => {
    const data = join(mkdtempSync(join(tmpdir(), 'agentflow-prm-')), 'test.jsonl');
    writeJsonl(data, examples(2, 3));
    await expect(runCli(['prm', 'eval', '--prm', '/nonexistent/prm', '--data', data])).rejects.toThrow(
      '/nonexistent/prm is not a PRM checkpoint: prm-config.json is missing',
    );
  });
});
