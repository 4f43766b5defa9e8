import { join } from 'node:path';
import type { LanguageModel } from '@agentflow/core';
import { clippedSurrogateObjective } from '@agentflow/dapo/graph';
import { createPolicyModel } from '@agentflow/llm';
import { createWarmStartedPolicy, type OpenedPolicy, type WarmStartedOpenSettings, type WarmStartedPolicy } from '@agentflow/models';
import type { PipelineContext } from './pipeline-context';

/** Stage checkpoints of the planner, in the order the pipeline writes them. */
export const POLICY_CHECKPOINTS = { warm: 'policy-warm', final: 'policy-final', dapo: 'dapo' } as const;

/** A planner opened for a stage: the trainable policy, its tokenizer and its chat model. */
export interface OpenPlanner extends OpenedPolicy {
  /** The policy as a chat model for the planner: exact token ids and sampling log-probs. */
  languageModel: LanguageModel;
}

/**
 * The run's planner in its two phases (@agentflow/models createWarmStartedPolicy): the warm
 * start on the planner folder (`warmStart.trainable`: an adapter of `policy.lora`'s shape, or
 * every weight), then DAPO (`train.trainable`: a fresh `train.lora` adapter on the warm planner
 * merged into `models/planner-warm`, the warm adapter trained on with `train.lora: null`, or every
 * weight). After a full warm start the warm planner is its checkpoint folder, `checkpoints/policy-warm`.
 */
export function plannerPhases(context: Pick<PipelineContext, 'config' | 'run' | 'policyDir'>): WarmStartedPolicy {
  const { config, run } = context;
  return createWarmStartedPolicy({
    baseDir: context.policyDir,
    warmDir: join(run.paths.checkpoints, POLICY_CHECKPOINTS.warm),
    // The warm planner merged: the PRM's default backbone, and DAPO's base with `train.lora`.
    mergedDir: join(run.root, 'models', 'planner-warm'),
    warm: { trainable: config.warmStart.trainable, lora: config.policy.lora },
    trained: { trainable: config.train.trainable, lora: config.train.lora },
    open: {
      seed: config.seed,
      device: config.device,
      dtype: config.policy.dtype,
      recompute: config.policy.recompute,
      ...(config.policy.rowBlockSize === null ? {} : { rowBlocks: { blockSize: config.policy.rowBlockSize } }),
      chatTemplateKwargs: config.policy.chatTemplateKwargs,
      objectives: [clippedSurrogateObjective],
    },
  });
}

/** `opened` with its chat model for the planner, sampling as `policy` configures it. */
export function plannerOf(context: Pick<PipelineContext, 'config'>, opened: OpenedPolicy): OpenPlanner {
  const { policy } = context.config;
  return {
    ...opened,
    languageModel: createPolicyModel({
      policy: opened.policy,
      tokenizer: opened.tokenizer,
      modelId: `local:${opened.modelDir}`,
      maxTokens: policy.maxNewTokens,
      temperature: policy.temperature,
      maxBatchSize: policy.generationRows,
    }),
  };
}

/**
 * Opens the planner as a pipeline stage left it in checkpoint `name`: the warm start's on the
 * base planner, or DAPO's (see plannerPhases). Without a saved checkpoint (or with `checkpoint:
 * null`) DAPO's phase starts where it starts: a fresh adapter (its first step exactly at the warm
 * policy) or the warm weights. `checkpoint` overrides where the checkpoint is read from;
 * undefined reads `checkpoints/<name>`.
 */
export async function openPlannerCheckpoint(
  context: Pick<PipelineContext, 'config' | 'run' | 'policyDir'>,
  name: string,
  settings: { optimizerState?: boolean; checkpoint?: string | null } = {},
): Promise<OpenPlanner> {
  const phases = plannerPhases(context);
  const open = { checkpoint: settings.checkpoint === undefined ? join(context.run.paths.checkpoints, name) : settings.checkpoint, optimizerState: settings.optimizerState ?? true };
  return plannerOf(context, name === POLICY_CHECKPOINTS.warm ? await phases.openWarm(open) : await phases.openTrained(open));
}

/** DAPO's planner where its phase starts (see WarmStartedPolicy.openTrained): the warm adapter trained on, a fresh adapter, or the warm weights. */
export async function openDapoStart(context: Pick<PipelineContext, 'config' | 'run' | 'policyDir'>, settings: Partial<WarmStartedOpenSettings> = {}): Promise<OpenPlanner> {
  return plannerOf(context, await plannerPhases(context).openTrained(settings));
}
