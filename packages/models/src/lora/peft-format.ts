import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentFlowError, diskFullError, isDiskFullError, writeFileAtomic } from '@agentflow/core';
import { type HostTensor, readSafetensors, toFloat32, writeSafetensors } from '@agentflow/tensor';
import type { DecoderConfig } from '../config/decoder-config';
import { isHalfWeight, LINEAR_MODULES, type LinearModule, linearShape, type ModelWeights } from '../weights/weight-names';
import { type LoraAdapter, type LoraMatrices, loraScale, loraTargets, parseLoraSettings } from './lora-adapter';

/** PEFT's key for one matrix: `base_model.model.{path}.lora_A.weight`. */
export function peftKey(path: string, matrix: 'A' | 'B'): string {
  return `base_model.model.${path}.lora_${matrix}.weight`;
}

/** Writes `adapter_config.json` and `adapter_model.safetensors` as PEFT does. */
export async function saveLoraAdapter(dir: string, adapter: LoraAdapter, baseModel = ''): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const { config } = adapter;
  const peftConfig = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: config.rank,
    lora_alpha: config.alpha,
    lora_dropout: 0,
    target_modules: config.targetModules,
    bias: 'none',
    fan_in_fan_out: false,
    use_rslora: config.useRslora,
    use_dora: false,
    init_lora_weights: true,
    inference_mode: true,
    modules_to_save: null,
  };
  const tensors: Record<string, HostTensor> = {};
  let bytes = 0;
  for (const [path, m] of adapter.matrices) {
    tensors[peftKey(path, 'A')] = { dtype: 'float32', shape: [config.rank, m.inFeatures], data: m.a };
    tensors[peftKey(path, 'B')] = { dtype: 'float32', shape: [m.outFeatures, config.rank], data: m.b };
    bytes += m.a.byteLength + m.b.byteLength;
  }
  // Each file replaced atomically (the weights first): a crash or a full disk leaves the previous adapter readable.
  const weightsPath = join(dir, 'adapter_model.safetensors');
  try {
    await writeSafetensors(weightsPath, tensors, { format: 'pt' });
    writeFileAtomic(join(dir, 'adapter_config.json'), `${JSON.stringify(peftConfig, null, 2)}\n`);
  } catch (error) {
    if (isDiskFullError(error)) throw diskFullError(weightsPath, bytes, error, { kept: `the previous adapter in ${dir} is intact` });
    throw error;
  }
}

/** Reads a PEFT LoRA folder for this model, checking every shape against the model config. */
export async function loadLoraAdapter(dir: string, modelConfig: DecoderConfig): Promise<LoraAdapter> {
  const configPath = join(dir, 'adapter_config.json');
  const weightsPath = join(dir, 'adapter_model.safetensors');
  for (const path of [configPath, weightsPath]) {
    if (!existsSync(path)) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `${path} is missing; a PEFT adapter folder needs adapter_config.json and adapter_model.safetensors.`,
        details: { dir, path },
      });
    }
  }
  const raw = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  if (raw.peft_type !== undefined && raw.peft_type !== 'LORA') {
    throw new AgentFlowError({ code: 'INVALID_CONFIG', message: `${configPath}: peft_type ${JSON.stringify(raw.peft_type)} is not LORA.` });
  }
  if (raw.use_dora === true) {
    throw new AgentFlowError({ code: 'INVALID_CONFIG', message: `${configPath}: DoRA adapters are not supported.` });
  }
  const targetModules = raw.target_modules === 'all-linear' ? [...LINEAR_MODULES] : (raw.target_modules as LinearModule[]);
  const config = parseLoraSettings({
    rank: raw.r as number,
    alpha: (raw.lora_alpha as number | undefined) ?? 8,
    targetModules,
    useRslora: raw.use_rslora === true,
  });
  const { tensors } = await readSafetensors(weightsPath, undefined, { as: 'float32' });
  const matrices = new Map<string, LoraMatrices>();
  for (const { path, module } of loraTargets(modelConfig, config)) {
    const [outFeatures, inFeatures] = linearShape(modelConfig, module);
    const a = tensors[peftKey(path, 'A')] ?? tensors[peftKey(path, 'A').replace('.weight', '.default.weight')];
    const b = tensors[peftKey(path, 'B')] ?? tensors[peftKey(path, 'B').replace('.weight', '.default.weight')];
    if (!a || !b) {
      throw new AgentFlowError({
        code: 'NOT_FOUND',
        message: `${weightsPath} has no ${peftKey(path, a ? 'B' : 'A')}, which target_modules ${JSON.stringify(config.targetModules)} implies.`,
        details: { dir, path },
      });
    }
    const expectA = [config.rank, inFeatures].join(',');
    const expectB = [outFeatures, config.rank].join(',');
    if (a.shape.join(',') !== expectA || b.shape.join(',') !== expectB) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `${path}: lora_A is [${a.shape}] and lora_B is [${b.shape}], expected [${expectA}] and [${expectB}] for this model.`,
        details: { dir, path },
      });
    }
    matrices.set(path, { a: a.data as Float32Array, b: b.data as Float32Array, inFeatures, outFeatures });
  }
  return { config, matrices };
}

/** Base weights with the adapter folded in: W' = W + scale * B A (a new map; the base is untouched). */
export function mergeLoraAdapter(weights: ModelWeights, adapter: LoraAdapter): ModelWeights {
  const merged: ModelWeights = new Map(weights);
  const scale = loraScale(adapter.config);
  const rank = adapter.config.rank;
  for (const [path, m] of adapter.matrices) {
    const name = `${path}.weight`;
    const base = weights.get(name);
    if (!base) throw new AgentFlowError({ code: 'NOT_FOUND', message: `Weight ${name} is missing.`, details: { name } });
    // A half-precision base is merged in float32 (the merged matrix stays float32).
    const data = isHalfWeight(base) ? toFloat32({ dtype: base.dtype, shape: base.shape, data: base.data }).data : base.data.slice();
    for (let row = 0; row < m.outFeatures; row++) {
      for (let k = 0; k < rank; k++) {
        const coefficient = scale * m.b[row * rank + k]!;
        if (coefficient === 0) continue;
        const offsetA = k * m.inFeatures;
        const offsetW = row * m.inFeatures;
        for (let column = 0; column < m.inFeatures; column++) data[offsetW + column]! += coefficient * m.a[offsetA + column]!;
      }
    }
    merged.set(name, { shape: base.shape, data });
  }
  return merged;
}
