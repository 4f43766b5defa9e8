import { join } from 'node:path';
import type { LanguageModel } from '@agentflow/core';
import { clippedSurrogateObjective } from '@agentflow/dapo/graph';
import { createPolicyModel } from '@agentflow/llm';
import { createWarmStartedLora, type OpenedLoraPolicy, type WarmStartedLora } from '@agentflow/models';
import type { PipelineContext } from './pipeline-context';

/** Stage checkpoints of the planner, in the order the pipeline writes them. */
export const POLICY_CHECKPOINTS = { warm: 'policy-warm', final: 'policy-final', dapo: 'dapo' } as const;

/** A planner opened for a stage: the trainable policy, its tokenizer and its chat model. */
export interface OpenPlanner extends OpenedLoraPolicy {
  /** The policy as a chat model for the planner: exact token ids and sampling log-probs. */
  languageModel: LanguageModel;
}

/**
 * The run's planner in its two phases: the warm start's adapter (`policy.lora`) on the planner
 * folder, then DAPO on it (`train.lora`: a fresh adapter on the warm planner merged into
 * `models/planner-warm`; null: the warm adapter trained on).
 */
export function plannerLora(context: Pick<PipelineContext, 'config' | 'run' | 'policyDir'>): WarmStartedLora {
  const { config, run } = context;
  return createWarmStartedLora({
    baseDir: context.policyDir,
    warmAdapterDir: join(run.paths.checkpoints, POLICY_CHECKPOINTS.warm),
    // The warm planner merged: the PRM's default backbone, and DAPO's base with `train.lora`.
    mergedDir: join(run.root, 'models', 'planner-warm'),
    warmLora: config.policy.lora,
    trainedLora: config.train.lora,
    open: {
      seed: config.seed,
      device: config.device,
      recompute: config.policy.recompute,
      chatTemplateKwargs: config.policy.chatTemplateKwargs,
      objectives: [clippedSurrogateObjective],
    },
  });
}

/** `opened` with its chat model for the planner, sampling as `policy` configures it. */
export function plannerOf(context: Pick<PipelineContext, 'config'>, opened: OpenedLoraPolicy): OpenPlanner {
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
 * Opens the planner as a pipeline stage left it in checkpoint `name`: the warm start's
 * adapter on the base planner, or DAPO's (see plannerLora). Without a saved checkpoint (or with
 * `checkpoint: null`) the adapter is fresh: DAPO's first step then starts exactly at the warm
 * policy. `checkpoint` overrides where the adapter is read from.
 */
export async function openPlannerCheckpoint(
  context: Pick<PipelineContext, 'config' | 'run' | 'policyDir'>,
  name: string,
  settings: { optimizerState?: boolean; checkpoint?: string | null } = {},
): Promise<OpenPlanner> {
  const lora = plannerLora(context);
  const open = { checkpoint: settings.checkpoint === undefined ? join(context.run.paths.checkpoints, name) : settings.checkpoint, optimizerState: settings.optimizerState ?? true };
  return plannerOf(context, name === POLICY_CHECKPOINTS.warm ? await lora.openWarm(open) : await lora.openTrained(open));
}
