import { AgentFlowError, createRandom } from '@agentflow/core';
import { loadModel } from '../weights/model-folder';
import { LINEAR_MODULES, type LinearModule } from '../weights/weight-names';
import { createLoraAdapter, type LoraAdapter } from './lora-adapter';
import { saveLoraAdapter } from './peft-format';

/** Settings of {@link writeLoraAdapterFolder}. */
export interface LoraAdapterFolderSettings {
  /** The model folder the adapter is for (its config gives the shapes; its path goes into adapter_config.json). */
  modelDir: string;
  /** The adapter folder to write (PEFT layout). */
  outDir: string;
  rank: number;
  alpha: number;
  /** Linear modules to adapt, among {@link LINEAR_MODULES} (`q_proj`, ..., `down_proj`). */
  targetModules: readonly string[];
  /** Seeds A (PEFT's initialisation) and, with `bStd`, B. */
  seed: number;
  /** Standard deviation of normal B values drawn from `seed`; 0 or absent keeps PEFT's B = 0 (the adapter changes nothing). */
  bStd?: number;
  /** How the refusal names `targetModules`: a CLI gives its option (`--targets`). Default: the setting's name. */
  wording?: { targetModules?: string };
}

/**
 * Writes a fresh PEFT LoRA adapter for a model folder, as `agentflow model init-adapter` does:
 * A drawn as PEFT does, B zero unless `bStd > 0` (then normal, so the adapter changes the
 * forward pass and A has gradients). A target module outside {@link LINEAR_MODULES} is an
 * INVALID_ARGUMENT error. Returns the adapter written.
 */
export async function writeLoraAdapterFolder(settings: LoraAdapterFolderSettings): Promise<LoraAdapter> {
  const { config } = await loadModel(settings.modelDir);
  for (const name of settings.targetModules) {
    if (!(LINEAR_MODULES as readonly string[]).includes(name)) {
      throw new AgentFlowError({
        code: 'INVALID_ARGUMENT',
        message: `${settings.wording?.targetModules ?? 'targetModules'} has ${JSON.stringify(name)}; expected names among ${LINEAR_MODULES.join(', ')}.`,
      });
    }
  }
  const targetModules = [...settings.targetModules] as LinearModule[];
  const adapter = createLoraAdapter(config, { rank: settings.rank, alpha: settings.alpha, targetModules }, settings.seed);
  const bStd = settings.bStd ?? 0;
  if (bStd > 0) {
    const random = createRandom(settings.seed).fork('lora-b');
    for (const matrices of adapter.matrices.values()) {
      for (let index = 0; index < matrices.b.length; index++) matrices.b[index] = bStd * random.normal();
    }
  }
  await saveLoraAdapter(settings.outDir, adapter, settings.modelDir);
  return adapter;
}
