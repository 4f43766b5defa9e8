import { AgentFlowError, describeValue } from '@agentflow/core';
import ort from 'onnxruntime-node';
import { type HostTensor, type TensorDtype, toFloat32 } from '../dtype/dtype';
import { findCudaProviderLibrary } from './cuda-provider';
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

function createTensorSession(name: string, device: ResolvedDevice, session: OrtSession): TensorSession {
  const inputNames = [...session.inputNames];
  const outputNames = [...session.outputNames];
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
      const ortFeeds: Record<string, InstanceType<typeof ort.Tensor>> = {};
      for (const input of inputNames) ortFeeds[input] = toOrtTensor(input, feeds[input]!);
      let results: Record<string, InstanceType<typeof ort.Tensor>>;
      try {
        results = (await session.run(ortFeeds, [...fetches])) as typeof results;
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
    release: () => session.release(),
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
    ...(settings.interOpThreads === undefined ? {} : { interOpNumThreads: settings.interOpThreads }),
  });

  const open = async (model: Uint8Array | string, target: ResolvedDevice, name: string): Promise<OrtSession> => {
    if (target === 'cuda' && findCudaProviderLibrary() === undefined) {
      throw new AgentFlowError({
        code: 'DEVICE_UNAVAILABLE',
        message: `CUDA is not available for session ${describeValue(name)}: onnxruntime-node has no CUDA provider library installed (reinstall it with ONNXRUNTIME_NODE_INSTALL=cuda12).`,
        details: { device: 'cuda' },
      });
    }
    try {
      return typeof model === 'string'
        ? await ort.InferenceSession.create(model, options(target))
        : await ort.InferenceSession.create(model, options(target));
    } catch (cause) {
      const message = (cause as Error).message ?? String(cause);
      const deviceProblem = target === 'cuda' && /cuda|shared library|provider/i.test(message);
      throw new AgentFlowError({
        code: deviceProblem ? 'DEVICE_UNAVAILABLE' : 'RUNTIME_ERROR',
        message: `ONNX Runtime could not create session ${describeValue(name)} on ${target}: ${message}`,
        cause,
        details: { device: target },
      });
    }
  };

  return {
    get device() {
      return resolved;
    },
    async createSession(model, sessionSettings = {}) {
      const name = sessionSettings.name ?? (typeof model === 'string' ? model : 'model');
      if (device === 'cpu' || device === 'cuda') {
        resolved = device;
        return createTensorSession(name, device, await open(model, device, name));
      }
      if (decision !== undefined) {
        const target = await decision;
        return createTensorSession(name, target, await open(model, target, name));
      }
      let settle!: (value: ResolvedDevice) => void;
      decision = new Promise((resolve) => {
        settle = resolve;
      });
      try {
        const session = await open(model, 'cuda', name);
        resolved = 'cuda';
        settle('cuda');
        return createTensorSession(name, 'cuda', session);
      } catch (error) {
        if (!AgentFlowError.hasCode(error, 'DEVICE_UNAVAILABLE')) {
          decision = undefined;
          settle('cpu');
          throw error;
        }
        resolved = 'cpu';
        settle('cpu');
        logger.warn(`[agentflow/tensor] CUDA unavailable (${error.message.split('\n')[0]}); running on CPU.`);
        return createTensorSession(name, 'cpu', await open(model, 'cpu', name));
      }
    },
  };
}
