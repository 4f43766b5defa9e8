import { describe, expect, it } from 'vitest';
import { getModelPreset } from '../config/presets';
import { FULL_TRAINING_ALTERNATIVE_LORA_RANK, formatMemoryPlan, layerParameterCount, type PlannedModel, parameterCount, type PlannedSession, planMemory } from './memory-plan';

const small = getModelPreset('qwen3-0.6b-shape');
const big = getModelPreset('qwen3-8b-shape');
const sessions: PlannedSession[] = [
  { kind: 'inference', name: 'generation', rows: 8, sequence: 2048, scored: 0, chunk: 512 },
  { kind: 'inference', name: 'log-probs', rows: 1, sequence: 2048, scored: 1024 },
  { kind: 'training', name: 'training step', rows: 1, tokens: 2048, completionTokens: 1024, recompute: true },
];
const gib = 2 ** 30;

describe('planMemory', () => {
  it('counts parameters as the checkpoints hold them (Qwen3-0.6B tied, Qwen3-8B untied)', () => {
    expect(parameterCount(small)).toBe(596_049_920);
    expect(parameterCount(big)).toBe(8_190_735_360);
  });

  it('counts one decoder layer from a shape, head width derived when absent', () => {
    // Qwen3-0.6B: q 2048x1024, k and v 1024x1024, o 1024x2048, three MLP 3072x1024; norms 2x1024 + 2x128.
    expect(layerParameterCount(small)).toBe(2 * 2048 * 1024 + 2 * 1024 * 1024 + 3 * 3072 * 1024 + 2 * 1024 + 2 * 128);
    const shape = { hiddenSize: 128, intermediateSize: 256, numAttentionHeads: 4, numKeyValueHeads: 2 };
    expect(layerParameterCount(shape)).toBe(layerParameterCount({ ...shape, headDim: 32 }));
  });

  it("counts each family's layer as its checkpoints hold it: Qwen2's q/k/v biases, no q/k norm outside Qwen3", () => {
    const qwen25 = getModelPreset('qwen2.5-7b-shape');
    // q 3584x3584 + 3584, k and v 512x3584 + 512, o 3584x3584, three MLP 18944x3584, two norms of 3584.
    expect(layerParameterCount(qwen25)).toBe(2 * 3584 * 3584 + 2 * 512 * 3584 + 3584 + 2 * 512 + 3 * 18944 * 3584 + 2 * 3584);
    const llama = getModelPreset('llama3.1-8b-shape');
    expect(layerParameterCount(llama)).toBe(2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336 * 4096 + 2 * 4096);
    expect(layerParameterCount({ ...llama, attentionBias: true, mlpBias: true })).toBe(layerParameterCount(llama) + 4096 + 2 * 1024 + 4096 + 2 * 14336 + 4096);
    const plan = planMemory({ device: 'cuda', availableBytes: 139 * gib, models: [{ name: 'planner', config: qwen25, sessions }] });
    expect(plan.rows.find((row) => row.part === 'weights')!.detail).toMatch(/^7\.62B parameters/);
  });

  it('holds one copy of the weights on the CPU whatever the sessions, and on CUDA one per model (shared) or per graph (per-session)', () => {
    const cpu = planMemory({ device: 'cpu', availableBytes: 64 * gib, models: [{ name: 'planner', config: small, sessions }] });
    const cuda = planMemory({ device: 'cuda', availableBytes: 139 * gib, models: [{ name: 'planner', config: small, sessions }] });
    const perSession = planMemory({ device: 'cuda', availableBytes: 139 * gib, weightPlacement: 'per-session', models: [{ name: 'planner', config: small, sessions }] });
    const weights = (plan: typeof cpu) => plan.rows.find((row) => row.part === 'weights')!.bytes;
    expect(weights(cpu)).toBe(parameterCount(small) * 4);
    expect(weights(cuda)).toBe(parameterCount(small) * 4);
    expect(cuda.rows.find((row) => row.part === 'weights')!.detail).toMatch(/x 1 device copy, one ONNX Runtime session whose branches are its graphs \(inference, training\)/);
    // generation and log-probs share the inference graph's session: two graphs, two copies.
    expect(weights(perSession)).toBe(2 * parameterCount(small) * 4);
    // One session, one arena: the largest graph's activations; separate sessions add theirs up.
    const activations = (plan: typeof cpu) => plan.rows.filter((row) => row.part.endsWith('(activations)')).map((row) => row.bytes);
    const [generation, logprobs, training] = activations(cuda);
    expect(cuda.totalBytes).toBeCloseTo(perSession.totalBytes - parameterCount(small) * 4 - Math.min(Math.max(generation!, logprobs!), training!), 0);
    expect(formatMemoryPlan(cuda).at(-1)).toMatch(/a session per model: its weights once, the largest of its graphs' activations/);
    expect(formatMemoryPlan(perSession).at(-1)).toMatch(/every session its own weights and activations/);
  });

  it("adds every session's activations on the CPU while each arena keeps its peak, the largest with the arena off", () => {
    const plan = (cpuArena?: boolean) =>
      planMemory({ device: 'cpu', availableBytes: 64 * gib, ...(cpuArena === undefined ? {} : { cpuArena }), models: [{ name: 'planner', config: small, sessions }] });
    const activations = (result: ReturnType<typeof plan>) => result.rows.filter((row) => row.part.endsWith('(activations)')).map((row) => row.bytes);
    const fixed = (result: ReturnType<typeof plan>) => result.rows.reduce((sum, row) => sum + (row.part.endsWith('(activations)') ? 0 : row.bytes), 0);
    const arena = plan();
    const inference = Math.max(...activations(arena).slice(0, 2)); // generation and log-probs share one session
    expect(arena.totalBytes).toBeCloseTo(fixed(arena) + inference + activations(arena)[2]!, 0);
    const heap = plan(false);
    expect(heap.totalBytes).toBeCloseTo(fixed(heap) + Math.max(...activations(heap)), 0);
    expect(heap.totalBytes).toBeLessThan(arena.totalBytes);
    expect(formatMemoryPlan(heap).at(-1)).toMatch(/the largest session activations \(arena off\)/);
    expect(formatMemoryPlan(arena).at(-1)).toMatch(/each arena keeps its peak/);
  });

  it('recomputation shrinks the training activations, and a plan that does not fit says so', () => {
    const training = (config: typeof big, recompute: boolean) =>
      planMemory({
        device: 'cuda',
        availableBytes: 139 * gib,
        models: [
          {
            name: 'planner',
            config,
            loraRank: 64,
            trained: true,
            sessions: [{ kind: 'training', name: 'step', rows: 1, tokens: 3072, completionTokens: 1024, recompute, attention: { kind: 'full' } }],
          },
        ],
      });
    // At 3k-token rows full attention's kept scores dominate; recomputation keeps about a quarter of them.
    expect(training(big, true).totalBytes).toBeLessThan(training(big, false).totalBytes / 2);
    expect(training(small, true).totalBytes).toBeLessThan(training(small, false).totalBytes);
    expect(training(small, true).fits).toBe(true);
    const kept = training(big, false);
    expect(kept.fits).toBe(false);
    expect(formatMemoryPlan(kept).at(-1)).toMatch(/of 139\.00 GiB on cuda .*DOES NOT FIT: [\d.]+ GiB over/);
    expect(formatMemoryPlan(training(small, true)).at(-1)).toMatch(/: fits$/);
  });

  it("counts blocked attention's one block of rows instead of [heads, rows, rows], so a recomputed step grows linearly with the row", () => {
    const step = (tokens: number, attention?: { kind: 'full' } | { kind: 'blocked'; blockSize: number }) => {
      const plan = planMemory({
        device: 'cpu',
        availableBytes: 64 * gib,
        models: [{ name: 'planner', config: small, loraRank: 8, trained: true, sessions: [{ kind: 'training', name: 'step', rows: 1, tokens, completionTokens: 64, recompute: true, ...(attention ? { attention } : {}) }] }],
      });
      return { total: plan.totalBytes, row: plan.rows.find((row) => row.part === 'step (activations)')! };
    };
    const full = { kind: 'full' } as const;
    // Full attention: one layer's score copies, 5.42 x 16 heads x rows^2 float32 values, 5.4 GiB at 4,096 tokens.
    expect(step(4096, full).row.bytes - step(4096).row.bytes).toBeGreaterThan(5 * gib);
    expect(step(4096, full).total / step(1024, full).total).toBeGreaterThan(2);
    // Blocked (the default, 256-row blocks): 4 copies of 16 heads x 256 rows x 4,096 keys, 256 MiB.
    expect(step(4096).row.detail).toMatch(/attention in 256-row blocks/);
    expect(step(4096).total / step(1024).total).toBeLessThan(1.5);
    const perBlock = 4 * 16 * 4096 * 4;
    expect(step(4096, { kind: 'blocked', blockSize: 512 }).row.bytes - step(4096).row.bytes).toBe(perBlock * 256);
    // A row no longer than one block is one block: the same count as its own rows squared.
    expect(step(128, { kind: 'blocked', blockSize: 512 }).row.bytes).toBe(step(128).row.bytes);
  });

  it('refuses an available memory that is not a positive number of bytes', () => {
    expect(() => planMemory({ device: 'cpu', availableBytes: 0, models: [] })).toThrow(/availableBytes must be a positive number of bytes, got 0/);
  });

  describe('full-parameter training', () => {
    const tiny = getModelPreset('tiny');
    const step: PlannedSession[] = [
      { kind: 'inference', name: 'log-probs and the KL reference', rows: 2, sequence: 256, scored: 128 },
      { kind: 'training', name: 'training step', rows: 2, tokens: 512, completionTokens: 256, recompute: true },
    ];
    const prm: PlannedModel = { name: 'PRM', config: small, sessions: [{ kind: 'scalar-head', name: 'step scoring', rows: 4, sequence: 256, training: false }] };
    const plan = (device: 'cpu' | 'cuda', planner: Partial<PlannedModel>, others: PlannedModel[] = [], weightPlacement?: 'shared' | 'per-session') =>
      planMemory({
        device,
        availableBytes: (device === 'cpu' ? 64 : 139) * gib,
        models: [{ name: 'planner', config: small, sessions: step, ...planner }, ...others],
        ...(weightPlacement ? { weightPlacement } : {}),
      });
    const part = (result: ReturnType<typeof plan>, name: string) => result.rows.find((row) => row.model === 'planner' && row.part === name);
    const weights = parameterCount(small) * 4;
    const embedding = 2 * small.vocabSize * small.hiddenSize * 4; // tied: the lookup's and the head's parts

    it("adds the weights x 4 (gradients, two AdamW moments, the session's copy of the gradients), embedding-sized buffers, and the reference with its own scoring", () => {
      const frozen = plan('cpu', {});
      const full = plan('cpu', { fullTraining: { reference: 'copy' } });
      expect(part(full, 'full training')!.bytes).toBe(4 * weights + embedding);
      expect(part(full, 'reference')!.bytes).toBe(weights);
      // The copy scores through an inference session of its own: the policy's scoring, once more.
      const scoring = part(full, 'reference scoring (activations)')!.bytes;
      expect(scoring).toBe(part(full, 'log-probs and the KL reference (activations)')!.bytes);
      expect(full.totalBytes - frozen.totalBytes).toBe(4 * weights + embedding + weights + scoring);
      const none = plan('cpu', { fullTraining: { reference: 'none' } });
      expect(none.totalBytes - frozen.totalBytes).toBe(4 * weights + embedding);
      expect(part(none, 'reference scoring (activations)')).toBeUndefined();
      expect(part(full, 'full training')!.detail).toMatch(/gradient accumulator, AdamW's two float32 moments and the training session's own copy of the gradients .*\(4 x /);
      expect(full.advice).toEqual([]);
    });

    it('counts a reference shared with the PRM backbone once, scored through the PRM backbone', () => {
      const own = plan('cpu', { fullTraining: { reference: 'copy' } }, [prm]);
      const shared = plan('cpu', { fullTraining: { reference: { sharedWith: 'PRM' } } }, [prm]);
      expect(own.totalBytes - shared.totalBytes).toBe(weights + part(own, 'reference scoring (activations)')!.bytes);
      expect(part(shared, 'reference')).toMatchObject({ bytes: 0, detail: "the starting weights, shared with PRM's (counted there)" });
      expect(shared.rows.filter((row) => row.part === 'weights').map((row) => row.bytes)).toEqual([weights, weights]);
      expect(() => plan('cpu', { fullTraining: { reference: { sharedWith: 'judge' } } }, [prm])).toThrow(/reference is shared with "judge", which is not another planned model \(planner, PRM\)/);
      expect(() => plan('cpu', { fullTraining: { reference: { sharedWith: 'PRM' } } }, [{ ...prm, config: tiny }])).toThrow(/a model of another shape/);
      expect(() => plan('cpu', { fullTraining: { reference: { sharedWith: 'PRM' } } }, [{ ...prm, fullTraining: { reference: 'copy' } }])).toThrow(/PRM, which trains every weight/);
      expect(() => plan('cpu', { loraRank: 8, trained: true, fullTraining: { reference: 'none' } })).toThrow(/trains every weight and a LoRA adapter of rank 8/);
    });

    it('on CUDA counts the device copies as for any model, and the host copy fed to them each run besides', () => {
      // Fed from the host, a model trained in full keeps a device copy per session, as 'per-session' does.
      const frozen = plan('cuda', {}, [], 'per-session');
      const full = plan('cuda', { fullTraining: { reference: 'copy' } });
      expect(part(plan('cuda', { fullTraining: { reference: 'copy' } }, [], 'per-session'), 'weights')!.bytes).toBe(part(full, 'weights')!.bytes);
      expect(part(full, 'weights')!.bytes).toBe(part(frozen, 'weights')!.bytes);
      expect(part(full, 'weights')!.detail).toMatch(/fed from host memory each run \(the CUDA runtime cannot update device copies in place\)/);
      // Host: the weights fed each run, gradients, two moments, the session's gradient outputs; the reference and its scoring.
      expect(full.totalBytes - frozen.totalBytes).toBe(5 * weights + embedding + weights + part(full, 'reference scoring (activations)')!.bytes);
    });

    it('plans the 0.6B full-parameter step of bench/memory-bench.mjs --training full within 15% of its measured peak', () => {
      // Peak RSS (VmHWM) of `node packages/models/bench/memory-bench.mjs --training full` (docs/perf.md,
      // "Full-parameter training at the Qwen3-0.6B shape: memory"): random Qwen3-0.6B-shape weights,
      // a frozen reference copy with its own session, 2 rows x (24 + 8) tokens, three steps of
      // log-probs, every weight's gradient and AdamW. Three runs on a 2-core CPU machine, ONNX
      // Runtime 1.29, peaked within 0.6 MB of each other; this is the first.
      const measuredPeakBytes = 17_134_710_784; // 16,341 MiB = 7.19 x the float32 weights
      const result = planMemory({
        device: 'cpu',
        availableBytes: 2 ** 40,
        models: [
          {
            name: 'qwen3-0.6b-shape',
            config: small,
            fullTraining: { reference: 'copy' },
            sessions: [
              { kind: 'inference', name: 'log-probs', rows: 2, sequence: 32, scored: 8 },
              { kind: 'training', name: 'training step', rows: 2, tokens: 64, completionTokens: 16, recompute: false },
            ],
          },
        ],
      });
      expect(Math.abs(result.totalBytes - measuredPeakBytes) / measuredPeakBytes).toBeLessThan(0.15);
    });

    it('refuses Qwen3-8B trained in full on one H200, and names LoRA and what it needs', () => {
      const result = planMemory({
        device: 'cuda',
        availableBytes: 139 * gib,
        models: [{ name: 'planner', config: big, fullTraining: { reference: 'copy' }, sessions: step }],
      });
      expect(result.fits).toBe(false);
      const lines = formatMemoryPlan(result);
      expect(lines.find((line) => line.includes('total:'))).toMatch(/of 139\.00 GiB on cuda .*DOES NOT FIT: [\d.]+ GiB over/);
      // Weights, gradients, two moments, the session's gradient outputs and (untied) one embedding-sized
      // buffer (5 x 30.51 + 2.32 GiB), and the reference: before the device copies.
      expect(result.advice[0]).toMatch(/^planner: full-parameter training holds [\d.]+ GiB before any activation \(weights .*, full training 154\.88 GiB, reference 30\.51 GiB\), more than the 139\.00 GiB available\.$/);
      expect(result.advice[1]).toMatch(
        new RegExp(`^Train planner with LoRA instead: rank ${FULL_TRAINING_ALTERNATIVE_LORA_RANK} on every linear module .* needs [\\d.]+ GiB in all, which fits\\.$`),
      );
      expect(lines.slice(-2)).toEqual(result.advice.map((line) => `    ${line}`));
      const lora = planMemory({ device: 'cuda', availableBytes: 139 * gib, models: [{ name: 'planner', config: big, loraRank: FULL_TRAINING_ALTERNATIVE_LORA_RANK, trained: true, sessions: step }] });
      expect(lora.fits).toBe(true);
      expect(result.advice[1]).toContain(`needs ${(lora.totalBytes / gib).toFixed(2)} GiB`);
    });
  });

  it('counts half-precision matrices at 2 bytes and norms at 4, with the float32 cast of the largest matrix per session; full training needs float32', () => {
    const model = (weightDtype?: PlannedModel['weightDtype']): PlannedModel => ({ name: 'planner', config: small, sessions, ...(weightDtype ? { weightDtype } : {}) });
    const plan = planMemory({ device: 'cpu', models: [model('float16')], availableBytes: 64 * gib });
    const weights = plan.rows.find((row) => row.part === 'weights')!;
    // Qwen3-0.6B: 596,049,920 parameters, of which 28 x (2 x 1024 + 2 x 128) + 1024 are norms.
    const norms = 28 * (2 * 1024 + 2 * 128) + 1024;
    expect(weights.bytes).toBe(2 * (parameterCount(small) - norms) + 4 * norms);
    expect(weights.detail).toContain('float16');
    // Inference casts one head block (2^24 elements) at once; the training step holds the whole head.
    expect(plan.rows.find((row) => row.part === 'float32 casts')!.bytes).toBe(4 * 2 ** 24 + 4 * 151936 * 1024);
    expect(planMemory({ device: 'cpu', models: [model()], availableBytes: 64 * gib }).rows.some((row) => row.part === 'float32 casts')).toBe(false);
    expect(() => planMemory({ device: 'cpu', models: [{ ...model('bfloat16'), fullTraining: { reference: 'none' } }], availableBytes: 64 * gib })).toThrow(
      /trains every weight in bfloat16; full-parameter training keeps float32 master weights/,
    );
  });
});
