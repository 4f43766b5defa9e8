import { AgentFlowError, describeValue, isPlainObject } from '@agentflow/core';
import ort from 'onnxruntime-node';
import { type HostTensor, type TensorDtype, toFloat32 } from '../dtype/dtype';
import { weightExternalData } from '../graph/serialize';
import { cudaUnavailableReason, explainCudaLoadError } from './cuda-provider';
import { resolveDevice } from './resolve-device';
import { createSharedWeightsSessions, type SharedGraphCore } from './shared-weights-sessions';
import type { ResolvedDevice, RuntimeSettings, TensorRuntime, TensorSession } from './runtime-types';

type OrtSession = Awaited<ReturnType<typeof ort.InferenceSession.create>>;
type OrtSessionOptions = NonNullable<Parameters<typeof ort.InferenceSession.create>[1]>;

function toOrtTensor(name: string, tensor: HostTensor): InstanceType<typeof ort.Tensor> {
  const host = tensor.dtype === 'float16' || tensor.dtype === 'bfloat16' ? toFloat32(tensor) : tensor;
  try {
    return new ort.Tensor(host.dtype as 'float32', host.data as Float32Array, host.shape);
  } catch (cause) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Feed ${describeValue(name)} (${host.dtype} ${describeValue(host.shape)}, ${host.data.length} values) cannot become an ONNX Runtime tensor.`,
      cause,
      details: { name, dtype: host.dtype, shape: host.shape },
    });
  }
}

function fromOrtTensor(value: InstanceType<typeof ort.Tensor>): HostTensor {
  return { dtype: value.type as TensorDtype, shape: value.dims.map(Number), data: value.data as Float32Array };
}

/** Feeds bound to a session (weights read in place), wrapped once. */
type BoundFeeds = ReadonlyMap<string, InstanceType<typeof ort.Tensor>>;

function wrapBound(weights: ReadonlyMap<string, HostTensor>): BoundFeeds {
  const bound = new Map<string, InstanceType<typeof ort.Tensor>>();
  for (const [name, tensor] of weights) {
    // Kept in their own dtype: a graph that declares a float16 weight casts it itself. The Node.js
    // binding has no bfloat16 tensors, and decoding one here would be a float32 copy per session.
    if (tensor.dtype === 'bfloat16') {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `Weight ${describeValue(name)} is bfloat16, which ONNX Runtime's Node.js binding cannot feed from host memory (the CPU, or hostWeights on CUDA): convert it to float16 or float32 first.`,
        details: { name, dtype: tensor.dtype },
      });
    }
    const wrapped = tensor.dtype === 'float16' ? new ort.Tensor('float16', tensor.data as Uint16Array, tensor.shape) : toOrtTensor(name, tensor);
    bound.set(name, wrapped);
  }
  return bound;
}

/**
 * Session options for a graph whose weights are initializers (CUDA): float16/bfloat16 weights are
 * cast to float32 at each use inside the graph, and ONNX Runtime's constant folding would turn
 * every such Cast of an initializer into a float32 initializer, a float32 copy of the weights
 * (measured on the CPU provider, ONNX Runtime 1.29: at level 'basic' and up, and at 'all' even
 * with ConstantFolding disabled). Level 'extended' without ConstantFolding keeps the Cast.
 */
function halfWeightOptions(weights: ReadonlyMap<string, HostTensor>): Partial<OrtSessionOptions> {
  const half = [...weights.values()].some((tensor) => tensor.dtype === 'float16' || tensor.dtype === 'bfloat16');
  return half ? { graphOptimizationLevel: 'extended', extra: { optimization: { disable_specified_optimizers: 'ConstantFolding' } } } : {};
}

/** Two `extra` trees of session config entries merged key by key (the second's leaves win). */
function mergeExtra(first: unknown, second: unknown): Record<string, unknown> {
  const merged: Record<string, unknown> = isPlainObject(first) ? { ...first } : {};
  for (const [key, value] of Object.entries(isPlainObject(second) ? second : {})) {
    merged[key] = isPlainObject(merged[key]) && isPlainObject(value) ? mergeExtra(merged[key], value) : value;
  }
  return merged;
}

type OrtTensors = Record<string, InstanceType<typeof ort.Tensor>>;

/** What a {@link TensorSession} runs on: one ONNX Runtime session, or one graph of a shared one. */
type SessionCore = SharedGraphCore;

function plainCore(session: OrtSession, bound: BoundFeeds = new Map()): SessionCore {
  return {
    inputNames: session.inputNames.filter((input) => !bound.has(input)),
    outputNames: [...session.outputNames],
    execute: async (feeds, fetches) => (await session.run({ ...Object.fromEntries(bound), ...feeds }, [...fetches])) as OrtTensors,
    release: () => session.release(),
  };
}

function createTensorSession(name: string, device: ResolvedDevice, core: SessionCore): TensorSession {
  const inputNames = [...core.inputNames];
  const outputNames = [...core.outputNames];
  return {
    name,
    device,
    inputNames,
    outputNames,
    async run(feeds, fetches = outputNames) {
      const missing = inputNames.filter((input) => feeds[input] === undefined);
      const unknownFeeds = Object.keys(feeds).filter((feed) => !inputNames.includes(feed));
      const unknownFetches = fetches.filter((fetch) => !outputNames.includes(fetch));
      if (missing.length > 0 || unknownFeeds.length > 0 || unknownFetches.length > 0) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Session ${describeValue(name)}: missing feeds ${describeValue(missing)}, unknown feeds ${describeValue(unknownFeeds)}, unknown fetches ${describeValue(unknownFetches)}. Inputs are ${describeValue(inputNames, 200)}; outputs are ${describeValue(outputNames, 200)}.`,
          details: { missing, unknownFeeds, unknownFetches },
        });
      }
      const ortFeeds: OrtTensors = {};
      for (const input of inputNames) ortFeeds[input] = toOrtTensor(input, feeds[input]!);
      let results: OrtTensors;
      try {
        results = await core.execute(ortFeeds, fetches);
      } catch (cause) {
        throw new AgentFlowError({
          code: 'RUNTIME_ERROR',
          message: `Session ${describeValue(name)} failed on ${device}: ${(cause as Error).message}`,
          cause,
          details: { session: name, device },
        });
      }
      const output: Record<string, HostTensor> = {};
      for (const fetch of fetches) output[fetch] = fromOrtTensor(results[fetch]!);
      return output;
    },
    release: () => core.release(),
  };
}

/**
 * Creates a runtime that makes ONNX Runtime sessions on one device. With `device: 'auto'`
 * the first session tries CUDA; when that fails, the runtime logs one line through
 * `settings.logger` and uses the CPU from then on.
 */
export function createRuntime(settings: RuntimeSettings = {}): TensorRuntime {
  const device = settings.device ?? 'auto';
  const logger = settings.logger ?? console;
  let decision: Promise<ResolvedDevice> | undefined;
  let resolved: ResolvedDevice | undefined;

  const options = (target: ResolvedDevice): OrtSessionOptions => ({
    executionProviders: target === 'cuda' ? [{ name: 'cuda', deviceId: settings.cudaDeviceId ?? 0 }] : ['cpu'],
    graphOptimizationLevel: settings.graphOptimizationLevel ?? 'all',
    ...(settings.intraOpThreads === undefined ? {} : { intraOpNumThreads: settings.intraOpThreads }),
    enableCpuMemArena: settings.cpuMemoryArena ?? true,
    enableMemPattern: settings.memoryPattern ?? false,
    ...(settings.interOpThreads === undefined ? {} : { interOpNumThreads: settings.interOpThreads }),
    ...(settings.intraOpSpinning === undefined ? {} : { extra: { session: { intra_op: { allow_spinning: settings.intraOpSpinning ? '1' : '0' } } } }),
  });

  const open = async (
    model: Uint8Array | string,
    target: ResolvedDevice,
    name: string,
    externalData?: { path: string; data: Uint8Array }[],
    extraOptions: Partial<OrtSessionOptions> = {},
  ): Promise<OrtSession> => {
    const cudaProblem = target === 'cuda' ? cudaUnavailableReason() : undefined;
    if (cudaProblem !== undefined) {
      throw new AgentFlowError({
        code: 'DEVICE_UNAVAILABLE',
        message: `CUDA is not available for session ${describeValue(name)}: ${cudaProblem}`,
        details: { device: 'cuda' },
      });
    }
    try {
      const base = options(target);
      // `extra` holds ONNX Runtime's config entries by dotted path; the runtime's and the session's own both apply.
      const extra = base.extra || extraOptions.extra ? { extra: mergeExtra(base.extra, extraOptions.extra) } : {};
      const sessionOptions = { ...base, ...extraOptions, ...extra, ...(externalData ? { externalData } : {}) };
      return typeof model === 'string'
        ? await ort.InferenceSession.create(model, sessionOptions)
        : await ort.InferenceSession.create(model, sessionOptions);
    } catch (cause) {
      const message = (cause as Error).message ?? String(cause);
      const deviceProblem = target === 'cuda' && /cuda|shared library|provider/i.test(message);
      throw new AgentFlowError({
        code: deviceProblem ? 'DEVICE_UNAVAILABLE' : 'RUNTIME_ERROR',
        message: `ONNX Runtime could not create session ${describeValue(name)} on ${target}: ${message}${deviceProblem ? explainCudaLoadError(message) : ''}`,
        cause,
        details: { device: target },
      });
    }
  };

  /** Opens a session on the resolved device; with 'auto', the first call decides (CUDA, else the CPU). */
  const openResolved = async (name: string, openOn: (target: ResolvedDevice) => Promise<TensorSession>): Promise<TensorSession> => {
    if (device === 'cpu' || device === 'cuda') {
      resolved = device;
      return openOn(device);
    }
    if (decision !== undefined) return openOn(await decision);
    const known = resolveDevice(device);
    let settle!: (value: ResolvedDevice) => void;
    decision = new Promise((resolve) => {
      settle = resolve;
    });
    const fallback = (reason: string): Promise<TensorSession> => {
      resolved = 'cpu';
      settle('cpu');
      logger.warn(`[agentflow/tensor] CUDA unavailable (${reason}); running on CPU (session ${describeValue(name)}).`);
      return openOn('cpu');
    };
    if (known.fallbackReason !== undefined) return fallback(known.fallbackReason);
    try {
      const session = await openOn('cuda');
      resolved = 'cuda';
      settle('cuda');
      return session;
    } catch (error) {
      if (!AgentFlowError.hasCode(error, 'DEVICE_UNAVAILABLE')) {
        decision = undefined;
        settle('cpu');
        throw error;
      }
      return fallback(error.message.split('\n')[0]!);
    }
  };

  const shared = new Map<ResolvedDevice, ReturnType<typeof createSharedWeightsSessions>>();
  const sharedSessions = (target: ResolvedDevice) => {
    let sessions = shared.get(target);
    if (!sessions) {
      sessions = createSharedWeightsSessions((model, weights, name) => open(model.bytes, target, name, model.externalData, halfWeightOptions(weights)));
      shared.set(target, sessions);
    }
    return sessions;
  };

  return {
    get device() {
      return resolved;
    },
    sharedWeightCopies: () => [...shared.values()].flatMap((sessions) => sessions.copies()),
    async createSession(model, sessionSettings = {}) {
      const name = sessionSettings.name ?? (typeof model === 'string' ? model : 'model');
      return openResolved(name, async (target) => createTensorSession(name, target, plainCore(await open(model, target, name))));
    },
    async openGraph(graph, sessionSettings = {}) {
      const name = sessionSettings.name ?? 'graph';
      const weights = graph.weights();
      return openResolved(name, async (target) => {
        const placement = sessionSettings.hostWeights === true || weights.size === 0 ? 'fed' : (settings.weightPlacement ?? 'auto');
        // On CUDA, device copies: CPU feeds would cross PCIe on every run (the GPU paths are not
        // run in CI, which has no GPU; the CPU runs each of them when asked, and the tests do).
        if (placement === 'shared' || (placement === 'auto' && target === 'cuda')) {
          return createTensorSession(name, target, await sharedSessions(target).join(graph, name));
        }
        if (placement === 'per-session') {
          const session = await open(graph.toBytes({ weights: 'external' }), target, name, weightExternalData(weights), halfWeightOptions(weights));
          return createTensorSession(name, target, plainCore(session));
        }
        return createTensorSession(name, target, plainCore(await open(graph.toBytes({ weights: 'inputs' }), target, name), wrapBound(weights)));
      });
    },
  };
}
