import { totalmem } from 'node:os';
import { AgentFlowError } from '@agentflow/core';
import { microBatchRanges, needsStepScores } from '@agentflow/dapo';
import { worldPlannerConfig, worldPlannerVocabCeiling } from '@agentflow/eval';
import {
  loadQwen3Config,
  type MemoryPlan,
  type PlannedModel,
  type PlannedSession,
  planMemory,
  plannedPhaseTraining,
  plannedPolicySessions,
  type Qwen3Config,
} from '@agentflow/models';
import { DEFAULT_PRM_TRAINING_BATCH_SIZE, prmInputTokenEstimate, resolvePrmTrainable } from '@agentflow/prm';
import { promptTokenEstimate } from '@agentflow/planner';
import type { RunConfig } from '../config/schema';

/** What a CUDA plan assumes the GPU has when the config does not say: one H200. */
export const DEFAULT_CUDA_GIB = 139;

/**
 * The model a config names: its folder's config.json, or for a preset the world's random planner
 * as the warm start creates it from `task.planner` (@agentflow/eval worldPlannerConfig), with a
 * ceiling of the vocabulary its tokenizer will learn (worldPlannerVocabCeiling).
 */
function modelConfig(source: RunConfig['policy']['model'], task: RunConfig['task']): Qwen3Config {
  if ('path' in source) return loadQwen3Config(source.path);
  // The schema allows a preset with the world only; a datasets task has no planner shape.
  if (task.kind !== 'world') throw new AgentFlowError({ code: 'INVALID_CONFIG', message: `preset ${source.preset} is the world's planner, but task.kind is ${task.kind}: give policy.model.path.` });
  return worldPlannerConfig(task.planner, worldPlannerVocabCeiling(task));
}

/**
 * The run's models and sessions as @agentflow/models' planMemory sees them: the planner
 * (generation unless rollouts go to vLLM, log-probs of DAPO micro-batches, the reference for the
 * KL term, the training step; an adapter or, trained in full, every weight: plannedPhaseTraining)
 * and the PRM (scoring, and its training when it has LoRA).
 */
export function runMemoryModels(config: RunConfig): PlannedModel[] {
  const { policy, train } = config;
  const prompt = promptTokenEstimate(policy.prompt);
  const sequence = prompt + policy.maxNewTokens;
  // DAPO's micro-batch of full-length rows (@agentflow/dapo microBatchRanges): the largest it makes.
  const trainingRows = microBatchRanges(Array.from({ length: train.microBatchRows }, () => sequence), train.microBatchRows, train.microBatchTokens)[0]![1];
  const sessions = plannedPolicySessions({
    promptTokens: prompt,
    completionTokens: policy.maxNewTokens,
    trainingRows,
    // One session samples, scores DAPO's micro-batches and (with the KL term) the frozen reference.
    ...(policy.rollouts.kind === 'local' ? { generationRows: Math.min(policy.generationRows, train.groupSize * train.promptsPerBatch) } : {}),
    recompute: policy.recompute,
    scoringName: `log-probs${train.klCoefficient > 0 ? ' and the KL reference' : ''}${policy.rollouts.kind === 'vllm' ? ' (rollouts on vLLM)' : ''}`,
  });
  // The PRM reads the planner's chat or a plain rendering of the step, cut to its default maxTokens.
  const prmSequence = prmInputTokenEstimate({ input: config.prm.input }, { promptTokens: prompt, completionTokens: policy.maxNewTokens });
  const prmSessions: PlannedSession[] = [{ kind: 'scalar-head', name: 'step scoring', rows: config.prm.scoringBatchSize, sequence: prmSequence, training: false }];
  // The PRM's training graph through the backbone (@agentflow/prm: LoRA or full) runs its default batch per step and recomputes its layers with the planner's setting.
  const prmTrainable = resolvePrmTrainable(config.prm);
  if (prmTrainable.kind !== 'head') {
    prmSessions.push({ kind: 'scalar-head', name: 'training', rows: DEFAULT_PRM_TRAINING_BATCH_SIZE, sequence: prmSequence, training: true, recompute: policy.recompute });
  }
  // An adapter, or every weight when either phase trains in full (with DAPO's, a copy of the warm planner as the KL reference); the weights at policy.dtype.
  const phases = { warm: { trainable: config.warmStart.trainable, lora: policy.lora }, trained: { trainable: train.trainable, lora: train.lora }, klReference: train.klCoefficient > 0 };
  const weights = { requested: policy.dtype, device: config.device, ...('path' in policy.model ? { modelDir: policy.model.path } : {}) };
  const planner: PlannedModel = { name: 'planner', config: modelConfig(policy.model, config.task), ...plannedPhaseTraining({ ...phases, weights }), sessions };
  // Without step credit (outcome, GiGPO) the run has no PRM stages and loads no PRM.
  if (!needsStepScores(train.credit)) return [planner];
  return [
    planner,
    {
      name: 'PRM',
      config: modelConfig(config.prm.backbone, config.task),
      ...(prmTrainable.kind === 'lora' ? { loraRank: prmTrainable.rank, trained: true } : {}),
      // In full, besides the gradient and moments, early stopping keeps a copy of the best epoch's weights: counted as the copy a reference would be.
      ...(prmTrainable.kind === 'full' ? { fullTraining: { reference: 'copy' as const } } : {}),
      sessions: prmSessions,
    },
  ];
}

/** The plan of the run on its device: the CPU's RAM, or `deviceMemoryGiB` (default an H200's 139 GiB) on CUDA. */
export function runMemoryPlan(config: RunConfig, machineBytes = totalmem()): MemoryPlan {
  const device = config.device === 'cuda' ? 'cuda' : 'cpu';
  const availableBytes = config.deviceMemoryGiB !== undefined ? config.deviceMemoryGiB * 2 ** 30 : device === 'cuda' ? DEFAULT_CUDA_GIB * 2 ** 30 : machineBytes;
  return planMemory({ device, models: runMemoryModels(config), availableBytes });
}
