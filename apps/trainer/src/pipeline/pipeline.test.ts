import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRunDirectory, readJsonl, type Trajectory } from '@agentflow/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSummarySchema } from '@agentflow/eval';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'short-run.yaml');

function agentflow(...args: string[]) {
  return spawnSync('node', [cli, ...args], { encoding: 'utf8', timeout: 240_000 });
}

const stateOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { stages: Record<string, { finishedAt: string }> };

describe('agentflow run (shortened embedded default)', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
  });

  it('runs the exact-teacher settings: a text PRM with LoRA, DAPO going on with the warm adapter, and a KL term', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-run-')), 'run');
    const result = agentflow('run', '--config', join(__dirname, '__fixtures__', 'short-run-exact-teacher.yaml'), '--out', out, '--quiet');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const summary = runSummarySchema.parse(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')));
    expect(summary.after.total).toBe(12);
    const state = stateOf(out) as { stages: Record<string, { result?: { demonstrations?: number } }> };
    expect(state.stages['warm-start']?.result?.demonstrations).toBe(16);
    const prm = JSON.parse(readFileSync(join(out, 'checkpoints', 'prm', 'prm-config.json'), 'utf8'));
    // prm.lora, the earlier spelling, is saved as what it means: trainable LoRA.
    expect(prm.settings).toMatchObject({ input: 'text', confidence: false, trainable: { kind: 'lora', rank: 16, alpha: 32 } });
    expect(existsSync(join(out, 'checkpoints', 'prm', 'adapter', 'adapter_model.safetensors'))).toBe(true);
    // DAPO trained the warm-start adapter itself (its rank, 16), not a fresh one.
    const adapter = JSON.parse(readFileSync(join(out, 'checkpoints', 'policy-final', 'adapter_config.json'), 'utf8')) as { r: number };
    expect(adapter.r).toBe(16);
    // With the KL term on, DAPO needs the frozen warm planner as its reference: both steps ran with it.
    const train = readJsonl<{ stage: string }>(join(out, 'metrics.jsonl')).filter((row) => row.stage === 'train');
    expect(train).toHaveLength(2);
  }, 240_000);

  it('runs every stage, killed with SIGKILL after its first evaluation and resumed without repeating finished work: the summary, the report and the logs', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-resume-')), 'run');
    const child = spawn('node', [cli, 'run', '--config', config, '--out', out, '--quiet'], { stdio: 'ignore' });
    let lockRefusal: { status: number | null; stderr: string } | undefined;
    // Kill it once the warm start and the first evaluation are done, in the middle of what follows.
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (existsSync(join(out, 'state.json')) && 'eval-before' in stateOf(out).stages) {
          clearInterval(timer);
          // A second writer while the first runs is refused at once, naming the holder; it writes nothing.
          const second = agentflow('train', '--resume', out, '--quiet');
          lockRefusal = { status: second.status, stderr: second.stderr };
          child.kill('SIGKILL');
          resolve();
        }
      }, 50);
      child.on('exit', () => {
        clearInterval(timer);
        reject(new Error('the run finished before it could be killed'));
      });
    });
    await new Promise((resolve) => child.once('exit', resolve));
    expect(lockRefusal?.status).toBe(1);
    expect(lockRefusal?.stderr).toContain(`is in use: pid ${child.pid} on `);
    expect(lockRefusal?.stderr).toContain('(agentflow run)');
    const before = stateOf(out).stages;
    expect(before.report).toBeUndefined();
    const resumed = agentflow('run', '--resume', out, '--quiet');
    expect(resumed.stderr).toBe('');
    expect(resumed.status).toBe(0);
    expect(resumed.stdout).toContain(`Report:  ${out}/report.html`);
    const after = stateOf(out).stages;
    // Stages finished before the kill were not run again.
    for (const [stage, { finishedAt }] of Object.entries(before)) expect(after[stage]?.finishedAt).toBe(finishedAt);
    expect(Object.keys(after)).toEqual(['warm-start', 'eval-before', 'collect', 'label', 'train-prm', 'train', 'eval-after', 'report']);
    // No trajectory was collected twice.
    const ids = readJsonl<Trajectory>(join(out, 'trajectories.jsonl')).map((trajectory) => trajectory.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(24);

    // What the finished run holds: the summary, the report and the logs.
    const summary = runSummarySchema.parse(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')));
    expect(summary.before.total).toBe(12);
    expect(summary.after.total).toBe(12);
    for (const phase of [summary.before, summary.after]) {
      expect(phase.ci95[0]).toBeLessThanOrEqual(phase.accuracy);
      expect(phase.ci95[1]).toBeGreaterThanOrEqual(phase.accuracy);
    }
    expect(summary.prm?.n).toBeGreaterThan(0);
    // The leakage guard ran before any stage: by task identity for the world (its questions read alike).
    expect(summary.task).toMatchObject({ kind: 'world', train: 24, test: 12 });
    expect(summary.leakage).toMatchObject({ method: 'identity', checked: { train: 24, test: 12 }, pairs: [], dropped: [] });
    expect(Number.isFinite(summary.prm?.mse)).toBe(true);
    const metrics = readJsonl<{ stage: string; step: number }>(join(out, 'metrics.jsonl'));
    expect(metrics.filter((row) => row.stage === 'train').map((row) => row.step)).toEqual([1, 2]);
    expect(metrics.filter((row) => row.stage === 'warm-start')).toHaveLength(3);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('before DAPO');
    expect(html).toContain('leakage check (task identity): 24 x 12 compared, 0 pair(s)');
    expect(html).not.toMatch(/<script/);
    // The default's shape: a flawed teacher on every task, the planner trained in full, a head-only
    // PRM that reads the planner's format and confidence, DAPO on a fresh adapter over the warm planner.
    const state = stateOf(out) as { stages: Record<string, { result?: { demonstrations?: number } }> };
    // Four training tasks are held back from the demonstrations for the warm start's check.
    expect(state.stages['warm-start']?.result?.demonstrations).toBe(20);
    expect(state.stages['warm-start']?.result).toMatchObject({ heldOutTasks: 4, check: { ok: true } });
    const prm = JSON.parse(readFileSync(join(out, 'checkpoints', 'prm', 'prm-config.json'), 'utf8'));
    expect(prm.settings).toMatchObject({ input: 'chat', confidence: 'extended' });
    expect(prm.settings.trainable).toEqual({ kind: 'head' });
    // Trained in full, the warm planner is its checkpoint folder: nothing merged.
    expect(existsSync(join(out, 'checkpoints', 'policy-warm', 'model.safetensors'))).toBe(true);
    expect(existsSync(join(out, 'models', 'planner-warm'))).toBe(false);
    const adapter = JSON.parse(readFileSync(join(out, 'checkpoints', 'policy-final', 'adapter_config.json'), 'utf8')) as { r: number };
    expect(adapter.r).toBe(4);
    // Every labelled step carries the log-probs its confidence features come from.
    const labels = readJsonl<{ completionLogprobs?: number[]; historyLogprobs?: number[][] }>(join(out, 'labels.jsonl'));
    expect(labels.length).toBeGreaterThan(0);
    expect(labels.every((label) => label.completionLogprobs!.length > 0 && Array.isArray(label.historyLogprobs))).toBe(true);
  }, 240_000);

  it('refuses to overwrite a run, and to resume a folder that is not one', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'agentflow-exists-')), 'run');
    openRunDirectory(out);
    const again = agentflow('run', '--config', config, '--out', out);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain(`${out} already holds a run. Continue it with \`agentflow run --resume ${out}\``);
    const stage = agentflow('collect', '--resume', join(out, 'nothing'));
    expect(stage.status).toBe(2);
    expect(stage.stderr).toContain('config.json is missing');
  });
});

describe('agentflow run --dry-run', () => {
  it('names each missing model folder, unreachable endpoint and missing key of the reference config', () => {
    const reference = join(__dirname, '..', '..', '..', '..', 'configs', 'aime-qwen3-8b.yaml');
    const result = spawnSync('node', [cli, 'run', '--config', reference, '--dry-run'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, DEEPSEEK_API_KEY: '' },
    });
    expect(result.status).toBe(2);
    expect(result.stdout).toContain('✘ planner model: model folder models/Qwen3-8B does not exist');
    expect(result.stdout).toContain('✘ PRM backbone: model folder models/Qwen3-0.6B does not exist');
    expect(result.stdout).toMatch(/✘ fixed modules \(ollama qwen2\.5:7b-instruct\): http:\/\/127\.0\.0\.1:11434\/api\/tags is unreachable/);
    expect(result.stdout).toContain('✘ step judge API key: environment variable DEEPSEEK_API_KEY is not set');
    expect(result.stdout).toMatch(/step judge \(openai deepseek-chat\): https:\/\/api\.deepseek\.com\/v1\/models/);
    expect(result.stderr).toContain('dry run: some checks failed');
  });
});
