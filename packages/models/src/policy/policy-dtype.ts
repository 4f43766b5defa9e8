import { AgentFlowError, assertNever, describeValue } from '@agentflow/core';
import { type Device, resolveDevice, type TensorDtype } from '@agentflow/tensor';
import { z } from 'zod';
import { loadDecoderConfig } from '../config/decoder-config';
import { folderFile, readFolderJson } from '../weights/folder-files';
import { checkModelWeights, type LoadWeightsSettings, loadModelWeights } from '../weights/load-weights';
import type { DecoderModel } from '../weights/random-model';
import type { WeightDtype } from '../weights/weight-names';

/** The element type a policy's base weights are held in, or 'auto' (see {@link resolveWeightDtype}). */
export type PolicyDtype = 'auto' | WeightDtype;

/** `policy.dtype` of a config: what {@link resolveWeightDtype} decides from. */
export const policyDtypeSchema = z
  .enum(['auto', 'float32', 'bfloat16', 'float16'])
  .default('auto')
  .describe(
    "Element type of the planner's base weights in memory; LoRA matrices, norms, the optimiser state, the loss and every accumulation stay float32 (each half-precision matrix is cast to float32 where it is used). auto: on CUDA the folder's own type (a bf16 checkpoint stays bf16, half the memory of float32), on the CPU float32; trained in full, always float32. bfloat16 needs CUDA (ONNX Runtime's Node.js binding has no bf16 host tensors); float16 works on both (on the CPU a bf16 folder converts exactly for weights of magnitude 6.1e-5 to 65504).",
  );

/** What {@link resolveWeightDtype} decides from. */
export interface WeightDtypeChoice {
  requested: PolicyDtype;
  /** The device the sessions run on ('auto' when CUDA's provider is installed and not yet tried: taken as CUDA). */
  device: Device;
  /** The element type the folder stores its matrices in (WeightsPlan.storedDtype). */
  storedDtype: TensorDtype;
  /** What trains: the base weights in full need float32 master weights. */
  trainable: 'lora' | 'full';
}

const halfOf = (dtype: TensorDtype): WeightDtype => (dtype === 'bfloat16' || dtype === 'float16' ? dtype : 'float32');

/**
 * The element type to hold a policy's base weights in. `auto`: float32 on the CPU (what this
 * project's recipes were tuned with; float16 there costs a Cast per use for half the weight
 * memory, within 2e-2 of float32's log-probs: docs/perf.md, #32), the folder's own type on CUDA
 * (bf16 stays bf16), float32 when the weights train in full. An explicit half type with full
 * training, or bfloat16 on the CPU, is an error that says what to use instead.
 */
export function resolveWeightDtype(choice: WeightDtypeChoice): WeightDtype {
  const { requested, trainable } = choice;
  const device = resolveDevice(choice.device).device;
  if (trainable === 'full' && requested !== 'auto' && requested !== 'float32') {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `policy.dtype ${describeValue(requested)} cannot train every weight: full-parameter training keeps float32 master weights (AdamW's updates are below ${requested}'s resolution). Use dtype auto or float32, or train LoRA.`,
      details: { dtype: requested, trainable },
    });
  }
  if (requested === 'bfloat16' && device === 'cpu') {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: "policy.dtype 'bfloat16' needs CUDA: ONNX Runtime's Node.js binding cannot feed bfloat16 weights on the CPU. Use float16 (a bf16 folder converts exactly for weights of magnitude 6.1e-5 to 65504), float32 or auto.",
      details: { dtype: requested, device },
    });
  }
  switch (requested) {
    case 'auto':
      return trainable === 'full' || device === 'cpu' ? 'float32' : halfOf(choice.storedDtype);
    case 'float32':
    case 'float16':
    case 'bfloat16':
      return requested;
    default:
      return assertNever(requested);
  }
}

/** Settings of {@link loadPolicyModel}. */
export interface LoadPolicyModelSettings extends Omit<LoadWeightsSettings, 'dtype'> {
  /** Default 'auto'. */
  dtype?: PolicyDtype;
  /** Default 'auto'. */
  device?: Device;
  /** Default 'lora'. */
  trainable?: 'lora' | 'full';
}

/** Loads the folder `dir` with its base weights in the type {@link resolveWeightDtype} picks (read from the safetensors headers first). */
export async function loadPolicyModel(dir: string, settings: LoadPolicyModelSettings = {}): Promise<DecoderModel> {
  const config = loadDecoderConfig(dir);
  // The headers alone, for the stored type; loadModelWeights checks the memory limit at the chosen one.
  const plan = await checkModelWeights(dir, config, { memoryLimitBytes: Number.POSITIVE_INFINITY });
  const dtype = resolveWeightDtype({
    requested: settings.dtype ?? 'auto',
    device: settings.device ?? 'auto',
    storedDtype: plan.storedDtype,
    trainable: settings.trainable ?? 'lora',
  });
  const limit = settings.memoryLimitBytes === undefined ? {} : { memoryLimitBytes: settings.memoryLimitBytes };
  return { config, weights: await loadModelWeights(dir, config, { ...limit, dtype }) };
}

/**
 * What {@link resolveWeightDtype} would pick for a policy opened on `modelDir`, from its
 * config.json's `torch_dtype` alone (no weights read; a memory plan's): float32 when the folder
 * does not say, or when there is no folder yet (a preset created by the run).
 */
export function plannedWeightDtype(choice: Omit<WeightDtypeChoice, 'storedDtype'> & { modelDir?: string }): WeightDtype {
  const path = choice.modelDir === undefined ? undefined : folderFile(choice.modelDir, 'config.json');
  const json = path === undefined ? undefined : readFolderJson(path);
  const stored = typeof json === 'object' && json !== null ? (json as Record<string, unknown>).torch_dtype : undefined;
  const storedDtype: TensorDtype = stored === 'bfloat16' || stored === 'float16' ? stored : 'float32';
  return resolveWeightDtype({ requested: choice.requested, device: choice.device, trainable: choice.trainable, storedDtype });
}
