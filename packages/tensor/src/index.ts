export {
  allocateTypedArray,
  bfloat16BitsToFloat32,
  bfloat16ToFloat16Array,
  bfloat16ToFloat32Array,
  createHostTensor,
  dtypeByteSize,
  float16BitsToFloat32,
  float16ToBfloat16Array,
  float16ToFloat32Array,
  float32ToBfloat16Array,
  float32ToBfloat16Bits,
  float32ToFloat16Array,
  float32ToFloat16Bits,
  firstNonFiniteHalf,
  isFloatDtype,
  shapeSize,
  tensorDtypes,
  toFloat32,
  type HostTensor,
  type TensorData,
  type TensorDtype,
  type TypedArrayByDtype,
} from './dtype/dtype';
export {
  openSafetensors,
  readSafetensors,
  type SafetensorsFile,
  type SafetensorsReadSettings,
} from './safetensors/safetensors-reader';
export { writeSafetensors } from './safetensors/safetensors-writer';
export { safetensorsDtypeName, type SafetensorsEntry } from './safetensors/safetensors-format';
export {
  ONNX_OPSET,
  type AttributeValue,
  type Dimension,
  type GradientSettings,
  type GraphBuilder,
  type Operand,
  type RawOperatorSettings,
  type RawOutputSettings,
  type RowBlockedSettings,
  type SaveModelSettings,
  type SliceSettings,
  type SymbolicTensor,
} from './graph/graph-types';
export type { RowFunction } from './blocking/row-blocked-ops';
export { createGraphBuilder, type GraphBuilderSettings } from './graph/graph-builder';
export type {
  Device,
  ResolvedDevice,
  RuntimeLogger,
  RuntimeSettings,
  SessionSettings,
  TensorRuntime,
  TensorSession,
} from './runtime/runtime-types';
export { createRuntime } from './runtime/runtime';
export type { SharedWeightCopy } from './runtime/shared-weights-sessions';
export { buildSharedWeightsModel, GRAPH_SELECTOR_INPUT, type DeclaredInput, type SharedWeightsModel } from './graph/shared-weights-model';
/** `device: 'auto'` decided once, before any session: the CPU when CUDA is known to be missing. */
export { resolveDevice, type DeviceResolution } from './runtime/resolve-device';
/** The CUDA provider (`pnpm gpu:setup`) and the CUDA 13 libraries it needs: where they are, what is missing. */
export {
  checkCudaLibraries,
  CUDA_PROVIDER_DEPENDENCIES,
  cudaUnavailableReason,
  describeMissingCudaLibraries,
  findCudaProviderLibrary,
  type CudaLibraryCheckSettings,
  type CudaLibraryReport,
} from './runtime/cuda-provider';
export type {
  AdamW,
  AdamWSettings,
  AdamWState,
  AdamWStepSettings,
  LearningRateSchedule,
  OptimizerStepResult,
} from './optim/optimizer-types';
export { adamWStep, createAdamW, loadAdamWState, saveAdamWState } from './optim/adamw';
export { learningRateAt } from './optim/schedules';
export { clipGradientsByGlobalNorm, globalGradientNorm } from './optim/gradient-clipping';
