import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, writeFileAtomic } from '@agentflow/core';
import { getModelPreset, loadLoraAdapter, loadQwen3Config, saveLoraAdapter } from '@agentflow/models';
import { readSafetensors, writeSafetensors } from '@agentflow/tensor';
import { z } from 'zod';
import { assemblePrm, type Prm } from './prm';
import { type PrmConfig, prmSettingsSchema } from './prm-settings';

/** File names of a PRM checkpoint folder. */
export const PRM_CONFIG_FILE = 'prm-config.json';
export const PRM_HEAD_FILE = 'prm-head.safetensors';
export const PRM_ADAPTER_DIR = 'adapter';

/** `prm-config.json`: everything but the tensors. */
export const prmCheckpointSchema = z
  .object({
    format: z.literal('agentflow-prm').describe('Marks the folder as a PRM checkpoint.'),
    version: z.literal(1).describe('Layout version of the folder.'),
    settings: prmSettingsSchema.describe('The settings the PRM was created with (backbone, LoRA, limits).'),
    hiddenSize: z.number().int().positive().describe('Width of the head: the backbone hidden size, plus the confidence features when they are on.'),
    trainingLabelMean: z.number().optional().describe('Mean training label (the constant baseline), once trained.'),
  })
  .strict();
export type PrmCheckpoint = z.infer<typeof prmCheckpointSchema>;

/**
 * Saves a PRM: `prm-config.json`, the head as `prm-head.safetensors` (`score.weight`
 * [1, hidden] and `score.bias` [1], the layout of a PyTorch `Linear(hidden, 1)`), and the
 * LoRA adapter in the PEFT layout under `adapter/`. A random backbone is stored as its
 * preset and seed (it is rebuilt bit for bit); a folder backbone by its absolute path.
 */
export async function savePrm(prm: Prm, dir: string): Promise<void> {
  const settings =
    prm.config.backbone.kind === 'folder'
      ? { ...prm.config, backbone: { ...prm.config.backbone, path: resolve(prm.config.backbone.path) } }
      : prm.config;
  const hiddenSize = prm.head.weight.length;
  await writeSafetensors(
    join(dir, PRM_HEAD_FILE),
    {
      'score.weight': { dtype: 'float32', shape: [1, hiddenSize], data: prm.head.weight },
      'score.bias': { dtype: 'float32', shape: [1], data: prm.head.bias },
    },
    { format: 'pt' },
  );
  if (prm.adapter) await saveLoraAdapter(join(dir, PRM_ADAPTER_DIR), prm.adapter);
  const checkpoint: PrmCheckpoint = {
    format: 'agentflow-prm',
    version: 1,
    settings,
    hiddenSize,
    ...(prm.trainingLabelMean === undefined ? {} : { trainingLabelMean: prm.trainingLabelMean }),
  };
  // Written last: a folder with a config is a complete checkpoint.
  writeFileAtomic(join(dir, PRM_CONFIG_FILE), `${JSON.stringify(checkpoint, null, 2)}\n`);
}

/** Loads a PRM saved by `savePrm`; `overrides` may change where it runs, not what it is. */
export async function loadPrm(
  dir: string,
  overrides: { device?: 'auto' | 'cuda' | 'cpu'; batchSize?: number; intraOpThreads?: number } = {},
): Promise<Prm> {
  const configPath = join(dir, PRM_CONFIG_FILE);
  if (!existsSync(configPath)) {
    throw new AgentFlowError({
      code: 'NOT_FOUND',
      message: `${dir} is not a PRM checkpoint: ${PRM_CONFIG_FILE} is missing (agentflow train-prm --out DIR writes one).`,
      details: { dir },
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(configPath, 'utf8'));
  } catch (cause) {
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `${configPath} is not valid JSON.`, cause });
  }
  const parsed = prmCheckpointSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'CHECKPOINT_ERROR',
      message: `${configPath}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
      cause: parsed.error,
    });
  }
  const checkpoint = parsed.data;
  const { tensors } = await readSafetensors(join(dir, PRM_HEAD_FILE), undefined, { as: 'float32' });
  const weight = tensors['score.weight'];
  const bias = tensors['score.bias'];
  if (!weight || !bias || weight.data.length !== checkpoint.hiddenSize || bias.data.length !== 1) {
    throw new AgentFlowError({
      code: 'CHECKPOINT_ERROR',
      message: `${join(dir, PRM_HEAD_FILE)} must hold score.weight [1, ${checkpoint.hiddenSize}] and score.bias [1].`,
    });
  }
  const config = { ...checkpoint.settings, ...overrides };
  const prm = await assemblePrm(config, {
    head: { weight: Float32Array.from(weight.data as Float32Array), bias: Float32Array.from(bias.data as Float32Array) },
    ...(checkpoint.trainingLabelMean === undefined ? {} : { trainingLabelMean: checkpoint.trainingLabelMean }),
    ...(config.lora ? { adapter: await loadAdapter(dir, config) } : {}),
  });
  return prm;
}

async function loadAdapter(dir: string, config: PrmConfig) {
  const modelConfig = config.backbone.kind === 'random' ? getModelPreset(config.backbone.preset) : loadQwen3Config(config.backbone.path);
  return loadLoraAdapter(join(dir, PRM_ADAPTER_DIR), modelConfig);
}
