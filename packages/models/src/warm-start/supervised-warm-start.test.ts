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
  seed: number;
  encodeExample(prompt: readonly ChatMessage[], completion: string): { promptIds: number[]; completionIds: number[] };
}

/** Settings over a fresh folder: a LoRA policy on one random model, its adapter drawn with the seed or read from the checkpoint. */
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
    prepare: async (seed) => void prepared.push(seed),
    async openPolicy(seed) {
      opened.push(seed);
      const policy = await createLocalPolicy({ model, lora: { rank: 4, alpha: 8 }, seed, runtime });
      if (existsSync(join(checkpointDir, 'adapter_config.json'))) await policy.load(checkpointDir);
      return {
        policy,
        seed,
        encodeExample: (prompt, completion) => ({ promptIds: bytes(prompt.map((message) => message.content).join('\n')), completionIds: [...bytes(completion), 0] }),
      };
    },
    ...overrides,
  };
}

const passing: WarmStartCheck = { heldOutTasks: 1, minAccuracy: 0.5, maxLoss: 100, abandon: null };

/** Runs `settings`, killed (an error out of onEpoch) after epoch `epoch`. */
async function killedAt(settings: SupervisedWarmStartSettings<Opened>, epoch: number) {
  const killed = runSupervisedWarmStart({
    ...settings,
    onEpoch: (progress) => {
      if (progress.epoch === epoch) throw new Error('killed');
    },
  });
  await expect(killed).rejects.toThrow('killed');
}

describe('runSupervisedWarmStart', () => {
  it('checkpoints every epoch, and a killed warm start resumes at the next epoch with the same losses', async () => {
    const whole = await runSupervisedWarmStart(settingsIn());
    expect(whole.losses).toHaveLength(4);
    expect(whole.losses.at(-1)!).toBeLessThan(whole.losses[0]!);
    expect(whole).toEqual({ losses: whole.losses, finalLoss: whole.losses.at(-1) });

    const settings = settingsIn();
    await killedAt(settings, 2);
    expect(JSON.parse(readFileSync(settings.progressPath, 'utf8'))).toEqual({ epochsDone: 2, losses: whole.losses.slice(0, 2) });
    expect(existsSync(join(settings.checkpointDir, 'adapter_config.json'))).toBe(true);
    const epochs: number[] = [];
    const resumed = await runSupervisedWarmStart({ ...settings, onEpoch: ({ epoch }) => void epochs.push(epoch) });
    expect(epochs).toEqual([3, 4]);
    expect(resumed.losses).toEqual(whole.losses);
  });

  it('checks its result on the held-back tasks, resumably, and says what it reached', async () => {
    const settings = settingsIn({
      check: passing,
      heldOutAccuracy: async (opened) => {
        expect(opened.seed).toBe(7);
        return 0.75;
      },
    });
    // Killed after epoch 1: the resume goes on with the same seed's policy from its checkpoint.
    await killedAt(settings, 1);
    expect(settings.prepared).toEqual([7]);
    const result = await runSupervisedWarmStart(settings);
    expect(settings.prepared).toEqual([7, 7]);
    expect(result.losses).toHaveLength(4);
    expect(result.check).toEqual({ epochs: 4, finalLoss: result.finalLoss, heldOutAccuracy: 0.75, ok: true });
  });

  it('stops a warm start whose loss is still high, or that cannot answer, naming what it reached', async () => {
    const epochs: number[] = [];
    const abandoned = settingsIn({
      check: { ...passing, abandon: { afterEpoch: 1, aboveLoss: 1e-6 } },
      onEpoch: ({ epoch }) => void epochs.push(epoch),
      remedy: 'raise epochs.',
    });
    const failed = await runSupervisedWarmStart(abandoned).catch((error: unknown) => error);
    expect(AgentFlowError.hasCode(failed, 'RUNTIME_ERROR')).toBe(true);
    expect((failed as Error).message).toMatch(/^The warm start failed its check: it abandoned after epoch 1 at loss [\d.]+ \(above 0\.000001\)\. raise epochs\.$/);
    expect(epochs).toEqual([1]);
    expect(abandoned.opened).toEqual([7]);
    const weak = await runSupervisedWarmStart(settingsIn({ check: passing, heldOutAccuracy: async () => 0.25 })).catch((error: unknown) => error);
    expect((weak as Error).message).toMatch(/^The warm start failed its check: it answered 25\.0% of the held-back tasks \(below minAccuracy 0\.5\)\. Training would start/);
  });

  it('with no epochs, saves the fresh adapter once', async () => {
    const settings = settingsIn({ epochs: 0 });
    expect(await runSupervisedWarmStart(settings)).toEqual({ losses: [], finalLoss: null });
    expect(existsSync(join(settings.checkpointDir, 'adapter_config.json'))).toBe(true);
  });
});
