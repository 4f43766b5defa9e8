import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonl } from '@agentflow/core';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runSummarySchema } from '@agentflow/eval';
import { vllmStatePath } from '@agentflow/llm';
import { startVllmStandIn, type VllmStandIn } from '@agentflow/llm/testing';
import type { RunConfig } from '../config/schema';
import { startFromSharedStages } from '../sweep/shared-stages';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const config = join(__dirname, '__fixtures__', 'vllm-short.yaml');
const compareConfig = join(__dirname, '__fixtures__', 'vllm-compare.yaml');

interface CliResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without blocking this process, which serves the stand-ins; `kill` ends it with SIGKILL when it resolves. */
function agentflow(args: string[], kill?: Promise<void>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void kill?.then(() => child.kill('SIGKILL'));
    child.on('error', reject);
    child.on('exit', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

const rolloutsFlag = (servers: VllmStandIn[], extra = '') =>
  `policy.rollouts={kind: vllm, urls: [${servers.map((server) => server.url).join(', ')}], model: planner-warm${extra}}`;

type Row = { stage: string; step: number; [key: string]: number | string };
const trainRows = (out: string) => readJsonl<Row>(join(out, 'metrics.jsonl')).filter((row) => row.stage === 'train');
const curveOf = (out: string) => readJsonl<Row>(join(out, 'metrics.jsonl')).filter((row) => row.stage === 'eval').map((row) => row.accuracy as number);

describe('DAPO with rollouts on two loopback vLLM servers (the stand-in), training on ONNX Runtime', () => {
  let servers: VllmStandIn[] = [];
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` first.`);
  });
  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
  });

  const start = async (out: string, beforeLoad?: (name: string) => Promise<void>) => {
    // The servers serve the folder DAPO's adapter applies to: the warm planner of the run, which a
    // full warm start (the world planner's default) leaves in its checkpoint folder.
    const modelDir = join(out, 'checkpoints', 'policy-warm');
    servers = [
      await startVllmStandIn({ modelDir, servedModelName: 'planner-warm' }),
      await startVllmStandIn({ modelDir, servedModelName: 'planner-warm', ...(beforeLoad ? { beforeLoad } : {}) }),
    ];
    return servers;
  };

  it('loads each step\'s adapter on both servers before its rollouts, samples token-exactly, and learns as the local run does', async () => {
    const work = mkdtempSync(join(tmpdir(), 'agentflow-vllm-'));
    const [first, second] = await start(join(work, 'vllm'));
    const viaVllm = await agentflow(['run', '--config', compareConfig, '--out', join(work, 'vllm'), '--quiet', '--set', rolloutsFlag([first!, second!], ', maxTokenLogprobGap: 1.0e-4')]);
    expect(viaVllm.stderr).toBe('');
    expect(viaVllm.status).toBe(0);
    // The local run starts from the vLLM run's warm start (the same for both: rollouts do not
    // enter it), copied as a sweep shares stages, so the two differ only in where DAPO's rollouts are sampled.
    const vllmConfig = JSON.parse(readFileSync(join(work, 'vllm', 'config.json'), 'utf8')) as RunConfig;
    const localConfig: RunConfig = { ...vllmConfig, out: join(work, 'local'), policy: { ...vllmConfig.policy, rollouts: { kind: 'local' } } };
    const stages = ['warm-start', 'eval-before', 'collect'];
    expect(startFromSharedStages({ dir: join(work, 'vllm'), stages }, join(work, 'local'), localConfig)).toEqual(stages);
    const local = await agentflow(['run', '--resume', join(work, 'local'), '--quiet']);
    expect(local.status, local.stderr).toBe(0);

    // Every version is loaded on both servers before any completion asks for it, then unloaded.
    const events = [first!, second!].flatMap((server, index) => server.events.map((event) => ({ ...event, server: index })));
    for (const version of [0, 1, 2]) {
      const name = `agentflow-step${version}`;
      const loads = events.filter((event) => event.kind === 'load' && event.name === name);
      const uses = events.filter((event) => event.kind === 'completion' && event.model === name);
      expect(loads.map((event) => event.server).sort(), name).toEqual([0, 1]);
      expect(uses.length, name).toBeGreaterThan(0);
      expect(Math.max(...loads.map((event) => event.at))).toBeLessThan(Math.min(...uses.map((event) => event.at)));
    }
    for (const server of [first!, second!]) {
      expect(server.events.filter((event) => event.kind === 'completion').length).toBeGreaterThan(0);
      expect(server.adapters()).toEqual(['agentflow-step2']);
    }
    expect(events.filter((event) => event.kind === 'completion' && event.model === 'planner-warm')).toHaveLength(0);

    // The ids and log-probs the servers sampled are those ONNX Runtime recomputes, within 1e-4.
    const rows = trainRows(join(work, 'vllm'));
    expect(rows.map((row) => [row.step, row.adapterVersion, row.vllmServers])).toEqual([
      [1, 0, 2],
      [2, 1, 2],
    ]);
    for (const row of rows) {
      expect(row.logprobGapTokens as number).toBeGreaterThan(0);
      expect(row.logprobGapMax as number).toBeLessThan(1e-4);
    }

    // Held-out accuracy, the same seed and warm start through both back ends, side by side.
    const summaryOf = (out: string) => runSummarySchema.parse(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')));
    const [vllmSummary, localSummary] = [summaryOf(join(work, 'vllm')), summaryOf(join(work, 'local'))];
    const [vllmCurve, localCurve] = [curveOf(join(work, 'vllm')), curveOf(join(work, 'local'))];
    console.log(
      [
        'held-out accuracy (20 tasks)  before  step 1  step 2  after',
        `local rollouts               ${[localSummary.before.accuracy, ...localCurve, localSummary.after.accuracy].map((value) => value.toFixed(3).padStart(6)).join('  ')}`,
        `vLLM stand-ins (2)           ${[vllmSummary.before.accuracy, ...vllmCurve, vllmSummary.after.accuracy].map((value) => value.toFixed(3).padStart(6)).join('  ')}`,
      ].join('\n'),
    );
    expect(vllmCurve).toHaveLength(2);
    // Within the noise of 20 tasks: a 95% band of two independent binomial proportions near 1/2.
    const band = 1.96 * Math.sqrt((2 * 0.25) / 20);
    for (const [index, accuracy] of vllmCurve.entries()) expect(Math.abs(accuracy - localCurve[index]!)).toBeLessThanOrEqual(band);
  }, 600_000);

  it('killed between an adapter save and its load on the servers, resumes with every server on the right version', async () => {
    const work = mkdtempSync(join(tmpdir(), 'agentflow-vllm-kill-'));
    const out = join(work, 'run');
    let signalKill: () => void = () => {};
    const killed = new Promise<void>((resolve) => {
      signalKill = resolve;
    });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = true;
    // The second server holds its load of step 1's adapter (saved, recorded as pending, loaded on
    // the first) until the run is killed; then that load fails, its client gone. The two loads are
    // sent at once, so the kill waits for the first server to finish reading the adapter (CI once
    // killed the run while that read was still in flight).
    const [first, second] = await start(out, async (name) => {
      if (!holding || name !== 'agentflow-step1') return;
      await vi.waitFor(() => expect(servers[0]!.adapters()).toContain('agentflow-step1'), { timeout: 30_000, interval: 20 });
      signalKill();
      await held;
      throw new Error('the client went away');
    });
    const flag = rolloutsFlag([first!, second!]);
    const stopped = await agentflow(['run', '--config', config, '--out', out, '--quiet', '--set', flag], killed);
    expect(stopped.signal).toBe('SIGKILL');
    const pending = JSON.parse(readFileSync(vllmStatePath(out), 'utf8'));
    expect(pending).toMatchObject({ loaded: { name: 'agentflow-step0' }, pending: { name: 'agentflow-step1' } });
    expect(existsSync(join(pending.pending.path, 'adapter_model.safetensors'))).toBe(true);
    expect(first!.adapters().sort()).toEqual(['agentflow-step0', 'agentflow-step1']);
    holding = false;
    release();

    const resumed = await agentflow(['run', '--resume', out, '--quiet']);
    expect(resumed.status, resumed.stderr).toBe(0);
    for (const server of [first!, second!]) expect(server.adapters()).toEqual(['agentflow-step2']);
    expect(JSON.parse(readFileSync(vllmStatePath(out), 'utf8'))).toEqual({
      loaded: { version: 2, name: 'agentflow-step2', path: join(out, 'adapters', 'agentflow-step2') },
    });
    // The half-loaded step 1 was unloaded from the first server and loaded again on both.
    const firstLoads = first!.events.filter((event) => event.kind !== 'completion').map((event) => `${event.kind} ${event.name}`);
    expect(firstLoads).toEqual([
      'load agentflow-step0',
      'load agentflow-step1',
      'unload agentflow-step1',
      'load agentflow-step1',
      'unload agentflow-step0',
      'load agentflow-step2',
      'unload agentflow-step1',
    ]);
    const rows = trainRows(out);
    expect(rows.map((row) => row.step)).toEqual([1, 2]);
    for (const row of rows) expect(row.logprobGapMax as number).toBeLessThan(1e-4);
  }, 600_000);
});
