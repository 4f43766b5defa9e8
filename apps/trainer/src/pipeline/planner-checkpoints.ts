import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, LanguageModel } from '@agentflow/core';
import { clippedSurrogateObjective } from '@agentflow/dapo/graph';
import { createPolicyModel } from '@agentflow/llm';
import { createLocalPolicy, createLoraAdapter, type LocalPolicy, loadLoraAdapter, loadModel, loadTokenizer, mergeLoraAdapter, type ModelTokenizer, saveModelFolder } from '@agentflow/models';
import type { RunConfig } from '../config/schema';
import type { PipelineContext } from './pipeline-context';

/** Stage checkpoints of the planner, in the order the pipeline writes them. */
export const POLICY_CHECKPOINTS = { warm: 'policy-warm', final: 'policy-final', dapo: 'dapo' } as const;

/** A planner opened for a stage: the trainable policy, its tokenizer and its chat model. */
export interface OpenPlanner {
  policy: LocalPolicy;
  tokenizer: ModelTokenizer;
  /** The policy as a chat model for the planner: exact token ids and sampling log-probs. */
  languageModel: LanguageModel;
  /** Prompt and completion ids exactly as the planner's calls produce them. */
  encodeExample(prompt: readonly ChatMessage[], completion: string): { promptIds: number[]; completionIds: number[] };
}

/** Generations batched together by the local policy (the concurrent runs of a stage). */

/**
 * Opens the model folder `dir` as a planner with a fresh LoRA adapter, or the adapter saved in
 * `checkpoint` (with its optimiser state unless `optimizerState` is false). The tokenizer
 * renders chats with the folder's own template and `policy.chatTemplateKwargs`.
 */
export async function openPlannerFolder(
  dir: string,
  policyConfig: RunConfig['policy'],
  settings: { seed: number; device: RunConfig['device']; checkpoint?: string; optimizerState?: boolean },
): Promise<OpenPlanner> {
  const model = await loadModel(dir);
  const tokenizer = await loadTokenizer(dir, { chatTemplateKwargs: policyConfig.chatTemplateKwargs });
  const policy = await createLocalPolicy({
    model,
    tokenizer,
    lora: { rank: policyConfig.lora.rank, alpha: policyConfig.lora.alpha },
    seed: settings.seed,
    device: settings.device,
    objectives: { 'clipped-surrogate': clippedSurrogateObjective },
    recompute: policyConfig.recompute,
  });
  if (settings.checkpoint && existsSync(join(settings.checkpoint, 'adapter_config.json'))) {
    await policy.load(settings.checkpoint, { optimizerState: settings.optimizerState ?? true });
  }
  const eos = tokenizer.eosTokenIds[0] as number;
  return {
    policy,
    tokenizer,
    languageModel: createPolicyModel({
      policy,
      tokenizer,
      modelId: `local:${dir}`,
      maxTokens: policyConfig.maxNewTokens,
      temperature: policyConfig.temperature,
      maxBatchSize: policyConfig.generationRows,
    }),
    encodeExample: (prompt, completion) => ({
      promptIds: tokenizer.encodeChat(prompt),
      completionIds: [...tokenizer.encode(completion), eos],
    }),
  };
}

/** Reads the small JSON state a stage keeps beside its checkpoint. */
export function readJsonIfExists<T>(path: string): T | undefined {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as T) : undefined;
}

/**
 * Writes the planner with a trained adapter merged in as a plain model folder (same
 * tokenizer), once: the PRM's backbone, and DAPO's base with `train.lora`. Written beside and
 * renamed into place, so a kill leaves no half folder.
 */
export async function writeMergedPlannerFolder(policyDir: string, adapterDir: string, outDir: string): Promise<void> {
  if (existsSync(join(outDir, 'config.json'))) return;
  const model = await loadModel(policyDir);
  const adapter = await loadLoraAdapter(adapterDir, model.config);
  const partial = `${outDir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  await saveModelFolder(partial, { ...model, weights: mergeLoraAdapter(model.weights, adapter) }, { tokenizer: { copyFrom: policyDir } });
  renameSync(partial, outDir);
}

/**
 * The warm-started planner with its adapter merged, as a plain model folder: the PRM's
 * backbone, and the base of DAPO's adapter when `train.lora` is set.
 */
export function warmPlannerDir(context: Pick<PipelineContext, 'run'>): string {
  return join(context.run.root, 'models', 'planner-warm');
}

/**
 * Opens the planner as a pipeline stage left it in checkpoint `name`: the warm start's
 * adapter on the base planner, or, when `train.lora` is set, DAPO's own adapter on the
 * warm planner with the warm adapter merged (written once, on first use). Without a saved
 * checkpoint (or with `checkpoint: null`) the adapter is fresh: DAPO's first step then
 * starts exactly at the warm policy. `checkpoint` overrides where the adapter is read from.
 */
export async function openPlannerCheckpoint(
  context: Pick<PipelineContext, 'config' | 'run' | 'policyDir'>,
  name: string,
  settings: { optimizerState?: boolean; checkpoint?: string | null } = {},
): Promise<OpenPlanner> {
  const { config, run } = context;
  const checkpoint = settings.checkpoint === undefined ? join(run.paths.checkpoints, name) : settings.checkpoint;
  const open = { seed: config.seed, device: config.device, optimizerState: settings.optimizerState ?? true, ...(checkpoint ? { checkpoint } : {}) };
  if (name === POLICY_CHECKPOINTS.warm || config.train.lora === null) return openPlannerFolder(context.policyDir, config.policy, open);
  const base = warmPlannerDir(context);
  await writeMergedPlannerFolder(context.policyDir, run.checkpoint(POLICY_CHECKPOINTS.warm), base);
  return openPlannerFolder(base, { ...config.policy, lora: config.train.lora }, open);
}

/**
 * The KL term's reference, the warm-started planner frozen, through `planner`'s own inference
 * session (no second copy of the model): with `train.lora` the planner is the merged warm
 * planner and the reference its zero adapter; without, the warm adapter itself, read from its
 * checkpoint (a resumed DAPO has moved the policy's own adapter on).
 */
export async function warmReference(context: Pick<PipelineContext, 'config' | 'run'>, planner: OpenPlanner) {
  const { adapter, model } = planner.policy;
  if (context.config.train.lora !== null) return planner.policy.frozen(createLoraAdapter(model.config, adapter.config));
  return planner.policy.frozen(await loadLoraAdapter(context.run.checkpoint(POLICY_CHECKPOINTS.warm), model.config));
}

