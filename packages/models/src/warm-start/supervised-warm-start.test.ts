import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError, type ChatMessage } from '@agentflow/core';
import { createRuntime } from '@agentflow/tensor';
import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { createLocalPolicy, type LocalPolicy } from '../policy/local-policy';
import { createRandomModel } from '../weights/random-model';
import { runSupervisedWarmStart, type SupervisedWarmStartSettings } from './supervised-warm-start';
import type { WarmStartCheck } from './warm-start-check';

const config = { ...getModelPreset('tiny'), hiddenSize: 32, intermediateSize: 48, headDim: 8 };
// One runtime, one thread per operator: tests share two cores with other suites.
const runtime = createRuntime({ device: 'cpu', intraOpThreads: 1 });
const model = createRandomModel(config, 3, { std: 0.2 });
const bytes = (text: string) => [...Buffer.from(text)];
const samples = [
  { prompt: [{ role: 'user', content: '2+3' }] as ChatMessage[], completion: '5' },
  { prompt: [{ role: 'user', content: '4+4' }] as ChatMessage[], completion: '8' },
  { prompt: [{ role: 'user', content: '1+6' }] as ChatMessage[], completion: '7' },
];

interface Opened {
  policy: LocalPolicy;
  initSeed: number;
  encodeExample(prompt: readonly ChatMessage[], completion: string): { promptIds: number[]; completionIds: number[] };
}

/** Settings over a fresh folder: a LoRA policy on one random model, its adapter drawn with the attempt's seed or read from the checkpoint. */
function settingsIn(overrides: Partial<SupervisedWarmStartSettings<Opened>> = {}): SupervisedWarmStartSettings<Opened> & { opened: number[]; prepared: number[] } {
  const root = mkdtempSync(join(tmpdir(), 'warm-start-'));
  const opened: number[] = [];
  const prepared: number[] = [];
  const checkpointDir = join(root, 'checkpoints', 'warm');
  return {
    opened,
    prepared,
    epochs: 4,
    batchSize: 2,
    learningRate: 5e-2,
    warmupSteps: 1,
    schedule: 'cosine',
    seed: 7,
    samples,
    check: null,
    checkpointDir,
    progressPath: join(root, 'checkpoints', 'warm-start.json'),
    prepare: async (initSeed) => void prepared.push(initSeed),
    async openPolicy(initSeed) {
      opened.push(initSeed);
      const policy = await createLocalPolicy({ model, lora: { rank: 4, alpha: 8 }, seed: initSeed, runtime });
      if (existsSync(join(checkpointDir, 'adapter_config.json'))) await policy.load(checkpointDir);
      return {
        policy,
        initSeed,
        encodeExample: (prompt, completion) => ({ promptIds: bytes(prompt.map((message) => message.content).join('\n')), completionIds: [...bytes(completion), 0] }),
      };
    },
    ...overrides,
  };
}

const passing: WarmStartCheck = { heldOutTasks: 1, minAccuracy: 0.5, maxLoss: 100, abandon: null, attempts: 3 };

/** Runs `settings`, killed (an error out of onEpoch) after epoch `epoch` of attempt `attempt`. */
async function killedAt(settings: SupervisedWarmStartSettings<Opened>, attempt: number, epoch: number) {
  const killed = runSupervisedWarmStart({
    ...settings,
    onEpoch: (progress) => {
      if (progress.attempt === attempt && progress.epoch === epoch) throw new Error('killed');
    },
  });
  await expect(killed).rejects.toThrow('killed');
}

describe('runSupervisedWarmStart', () => {
  it('checkpoints every epoch, and a killed warm start resumes at the next epoch with the same losses', async () => {
    const whole = await runSupervisedWarmStart(settingsIn());
    expect(whole.losses).toHaveLength(4);
    expect(whole.losses.at(-1)!).toBeLessThan(whole.losses[0]!);
    expect(whole).toMatchObject({ initSeed: 7, finalLoss: whole.losses.at(-1) });
    expect(whole.attempts).toBeUndefined();

    const settings = settingsIn();
    await killedAt(settings, 0, 2);
    expect(JSON.parse(readFileSync(settings.progressPath, 'utf8'))).toMatchObject({ attempt: 0, epochsDone: 2, failed: [] });
    expect(existsSync(join(settings.checkpointDir, 'adapter_config.json'))).toBe(true);
    const epochs: number[] = [];
    const resumed = await runSupervisedWarmStart({ ...settings, onEpoch: ({ epoch }) => void epochs.push(epoch) });
    expect(epochs).toEqual([3, 4]);
    expect(resumed.losses).toEqual(whole.losses);
  });

  it('redoes a failing attempt from the next initialisation, resumably, and reports every attempt', async () => {
    const retried: number[] = [];
    const settings = settingsIn({
      check: passing,
      heldOutAccuracy: async (opened, attempt) => {
        expect(opened.initSeed).toBe(7 + 1000 * attempt);
        return attempt === 0 ? 0.25 : 0.75;
      },
      onRetry: (failed) => void retried.push(failed.attempt),
    });
    // Killed in the second attempt: the resume goes on with it, the failed first attempt kept.
    await killedAt(settings, 1, 1);
    expect(retried).toEqual([0]);
    expect(settings.prepared).toEqual([7, 1007]);
    const result = await runSupervisedWarmStart(settings);
    expect(settings.prepared).toEqual([7, 1007, 1007]);
    expect(result.initSeed).toBe(1007);
    expect(result.losses).toHaveLength(4);
    expect(result.attempts).toMatchObject([
      { attempt: 0, initSeed: 7, epochs: 4, ok: false, heldOutAccuracy: 0.25, reason: 'attempt 1 (init seed 7) answered 25.0% of the held-back tasks (below minAccuracy 0.5)' },
      { attempt: 1, initSeed: 1007, epochs: 4, ok: true, heldOutAccuracy: 0.75 },
    ]);
  });

  it('abandons attempts whose loss is still high, and stops naming each one when all fail', async () => {
    const epochs: string[] = [];
    const settings = settingsIn({
      check: { ...passing, abandon: { afterEpoch: 1, aboveLoss: 1e-6 }, attempts: 2 },
      onEpoch: ({ attempt, epoch }) => void epochs.push(`${attempt}:${epoch}`),
      remedy: 'raise epochs.',
    });
    const failed = await runSupervisedWarmStart(settings).catch((error: unknown) => error);
    expect(AgentFlowError.hasCode(failed, 'RUNTIME_ERROR')).toBe(true);
    expect((failed as Error).message).toMatch(
      /^The warm start failed its check in all 2 attempt\(s\): attempt 1 \(init seed 7\) abandoned after epoch 1 at loss [\d.]+ \(above 0\.000001\); attempt 2 \(init seed 1007\) abandoned after epoch 1 at loss [\d.]+ \(above 0\.000001\)\. raise epochs\.$/,
    );
    expect(epochs).toEqual(['0:1', '1:1']);
    expect(settings.opened).toEqual([7, 1007]);
  });

  it('with no epochs, saves the fresh adapter once', async () => {
    const settings = settingsIn({ epochs: 0 });
    expect(await runSupervisedWarmStart(settings)).toEqual({ losses: [], finalLoss: null, initSeed: 7 });
    expect(existsSync(join(settings.checkpointDir, 'adapter_config.json'))).toBe(true);
  });
});
