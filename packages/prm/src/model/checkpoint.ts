import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentFlowError, writeFileAtomic } from '@agentflow/core';
import { getModelPreset, loadLoraAdapter, loadQwen3Config, saveLoraAdapter, saveModelFolder, type TokenizerSource } from '@agentflow/models';
import { readSafetensors, writeSafetensors } from '@agentflow/tensor';
import { z } from 'zod';
import { headLayoutOf } from './head-graph';
import { assemblePrm, type Prm } from './prm';
import { type PrmConfig, prmSettingsSchema } from './prm-settings';

/** File names of a PRM checkpoint folder. */
export const PRM_CONFIG_FILE = 'prm-config.json';
export const PRM_HEAD_FILE = 'prm-head.safetensors';
export const PRM_ADAPTER_DIR = 'adapter';
/** The backbone trained in full, a Hugging Face model folder (trainable kind full). */
export const PRM_BACKBONE_DIR = 'backbone';

/** `prm-config.json`: everything but the tensors. */
export const prmCheckpointSchema = z
  .object({
    format: z.literal('agentflow-prm').describe('Marks the folder as a PRM checkpoint.'),
    version: z.literal(1).describe('Layout version of the folder.'),
    settings: prmSettingsSchema.describe('The settings the PRM was created with (backbone, what trains, limits).'),
    hiddenSize: z.number().int().positive().describe("The head's inputs: the backbone hidden size, plus the confidence features when they are on."),
    trainingLabelMean: z.number().optional().describe('Mean training label (the constant baseline), once trained.'),
  })
  .strict();
export type PrmCheckpoint = z.infer<typeof prmCheckpointSchema>;

/** Names of the head's hidden layer in `prm-head.safetensors` (`headHidden` > 0). */
const SCORE_HIDDEN_WEIGHT = 'score.hidden.weight';
const SCORE_HIDDEN_BIAS = 'score.hidden.bias';
/** Its inputs' standardisation, (x - shift) * scale, each [inputs]. */
const SCORE_INPUT_SHIFT = 'score.input.shift';
const SCORE_INPUT_SCALE = 'score.input.scale';

/**
 * Saves a PRM: `prm-config.json`, the head as `prm-head.safetensors` (`score.weight`
 * [1, width] and `score.bias` [1], the layout of a PyTorch `Linear(width, 1)`; with a hidden
 * layer, also `score.hidden.weight` [headHidden, inputs] and `score.hidden.bias` [headHidden],
 * a `Linear(inputs, headHidden)`, and the standardisation of its inputs, `score.input.shift` and
 * `score.input.scale` [inputs]; width is then headHidden), the
 * LoRA adapter in the PEFT layout under `adapter/`, and a backbone trained in full as a
 * Hugging Face model folder under `backbone/` (models' saveModelFolder, float32; the tokenizer
 * files of a folder backbone copied, the byte-level one for a preset). A random backbone is
 * otherwise stored as its preset and seed, a folder backbone as its absolute path.
 */
export async function savePrm(prm: Prm, dir: string): Promise<void> {
  const settings =
    prm.config.backbone.kind === 'folder'
      ? { ...prm.config, backbone: { ...prm.config.backbone, path: resolve(prm.config.backbone.path) } }
      : prm.config;
  const layout = headLayoutOf(prm.head);
  const { hiddenWeight, hiddenBias, inputShift, inputScale } = prm.head;
  await writeSafetensors(
    join(dir, PRM_HEAD_FILE),
    {
      'score.weight': { dtype: 'float32', shape: [1, prm.head.weight.length], data: prm.head.weight },
      'score.bias': { dtype: 'float32', shape: [1], data: prm.head.bias },
      ...(hiddenWeight && hiddenBias && inputShift && inputScale
        ? {
            [SCORE_HIDDEN_WEIGHT]: { dtype: 'float32' as const, shape: [layout.hidden, layout.inputs], data: hiddenWeight },
            [SCORE_HIDDEN_BIAS]: { dtype: 'float32' as const, shape: [layout.hidden], data: hiddenBias },
            [SCORE_INPUT_SHIFT]: { dtype: 'float32' as const, shape: [layout.inputs], data: inputShift },
            [SCORE_INPUT_SCALE]: { dtype: 'float32' as const, shape: [layout.inputs], data: inputScale },
          }
        : {}),
    },
    { format: 'pt' },
  );
  if (prm.adapter) await saveLoraAdapter(join(dir, PRM_ADAPTER_DIR), prm.adapter);
  if (prm.config.trainable.kind === 'full') {
    const backbone = prm.config.backbone;
    // A folder backbone's tokenizer goes with its weights, so the saved folder loads on its own.
    const tokenizer: TokenizerSource | undefined = backbone.kind === 'folder' ? { copyFrom: backbone.path } : undefined;
    await saveModelFolder(join(dir, PRM_BACKBONE_DIR), prm.model, tokenizer ? { tokenizer } : {});
  }
  const checkpoint: PrmCheckpoint = {
    format: 'agentflow-prm',
    version: 1,
    settings,
    hiddenSize: layout.inputs,
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
  const headHidden = checkpoint.settings.headHidden;
  const inputs = checkpoint.hiddenSize;
  const hiddenWeight = tensors[SCORE_HIDDEN_WEIGHT];
  const hiddenBias = tensors[SCORE_HIDDEN_BIAS];
  const inputShift = tensors[SCORE_INPUT_SHIFT];
  const inputScale = tensors[SCORE_INPUT_SCALE];
  const complete =
    weight?.data.length === (headHidden || inputs) &&
    bias?.data.length === 1 &&
    (headHidden === 0
      ? hiddenWeight === undefined && hiddenBias === undefined
      : hiddenWeight?.data.length === headHidden * inputs &&
        hiddenBias?.data.length === headHidden &&
        inputShift?.data.length === inputs &&
        inputScale?.data.length === inputs);
  if (!complete) {
    throw new AgentFlowError({
      code: 'CHECKPOINT_ERROR',
      message: `${join(dir, PRM_HEAD_FILE)} must hold ${
        headHidden === 0
          ? `score.weight [1, ${inputs}] and score.bias [1] and no hidden layer`
          : `score.input.shift [${inputs}], score.input.scale [${inputs}], score.hidden.weight [${headHidden}, ${inputs}], score.hidden.bias [${headHidden}], score.weight [1, ${headHidden}] and score.bias [1]`
      } (${PRM_CONFIG_FILE}: hiddenSize ${inputs}, settings.headHidden ${headHidden}); it holds ${Object.entries(tensors)
        .map(([name, tensor]) => `${name} [${tensor.shape.join(', ')}]`)
        .join(', ')}.`,
    });
  }
  const config = { ...checkpoint.settings, ...overrides };
  const backboneFolder = join(dir, PRM_BACKBONE_DIR);
  if (config.trainable.kind === 'full' && !existsSync(join(backboneFolder, 'config.json'))) {
    throw new AgentFlowError({
      code: 'CHECKPOINT_ERROR',
      message: `${dir} is a PRM whose backbone trained in full, but ${backboneFolder} holds no model folder (config.json); the checkpoint is incomplete: save it again.`,
      details: { dir },
    });
  }
  const prm = await assemblePrm(config, {
    head: {
      weight: Float32Array.from(weight!.data as Float32Array),
      bias: Float32Array.from(bias!.data as Float32Array),
      ...(hiddenWeight && hiddenBias && inputShift && inputScale
        ? {
            hiddenWeight: Float32Array.from(hiddenWeight.data as Float32Array),
            hiddenBias: Float32Array.from(hiddenBias.data as Float32Array),
            inputShift: Float32Array.from(inputShift.data as Float32Array),
            inputScale: Float32Array.from(inputScale.data as Float32Array),
          }
        : {}),
    },
    ...(checkpoint.trainingLabelMean === undefined ? {} : { trainingLabelMean: checkpoint.trainingLabelMean }),
    ...(config.trainable.kind === 'lora' ? { adapter: await loadAdapter(dir, config) } : {}),
    ...(config.trainable.kind === 'full' ? { backboneFolder } : {}),
  });
  return prm;
}

async function loadAdapter(dir: string, config: PrmConfig) {
  const modelConfig = config.backbone.kind === 'random' ? getModelPreset(config.backbone.preset) : loadQwen3Config(config.backbone.path);
  return loadLoraAdapter(join(dir, PRM_ADAPTER_DIR), modelConfig);
}
