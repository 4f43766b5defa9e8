import { totalmem } from 'node:os';
import { getModelPreset, loadQwen3Config, type MemoryPlan, type PlannedModel, type PlannedSession, planMemory, type Qwen3Config } from '@agentflow/models';
import type { RunConfig } from '../config/schema';

/** What a CUDA plan assumes the GPU has when the config does not say: one H200. */
export const DEFAULT_CUDA_GIB = 139;
const PREFILL_CHUNK = 512; // @agentflow/models generate's default prefillChunkTokens
const PRM_TRAINING_ROWS = 32; // @agentflow/prm's default training batchSize: examples per backbone run

/** The model's config: from its folder's config.json, or its preset. */
function modelConfig(source: RunConfig['policy']['model']): Qwen3Config {
  return 'path' in source ? loadQwen3Config(source.path) : getModelPreset(source.preset);
}

/**
 * Tokens of one planner prompt, estimated from the prompt template's character budgets: the
 * compact prompt is at most maxPromptChars characters (a token per character at worst, for a
 * tokenizer learned from the world); the full one is a system message with the tool catalogue
 * (about 4,000 characters) and the step log's budget, at about 4 characters per token for
 * Qwen3's tokenizer on English and code.
 */
export function promptTokens(config: RunConfig): number {
  const prompt = config.policy.prompt;
  return prompt.kind === 'compact' ? prompt.maxPromptChars : Math.ceil((4000 + prompt.memoryBudgetChars) / 4);
}

/**
 * The run's models and sessions as @agentflow/models' planMemory sees them: the planner
 * (generation unless rollouts go to vLLM, log-probs of DAPO micro-batches, the reference for the
 * KL term, the training step) and the PRM (scoring, and its training when it has LoRA).
 */
export function runMemoryModels(config: RunConfig): PlannedModel[] {
  const planner = modelConfig(config.policy.model);
  const sequence = promptTokens(config) + config.policy.maxNewTokens;
  const train = config.train;
  const rows = train.microBatchRows;
  const tokens = Math.min(train.microBatchTokens ?? rows * sequence, rows * sequence);
  const trainingRows = Math.max(1, Math.min(rows, Math.floor(tokens / sequence)));
  const sessions: PlannedSession[] = [];
  if (config.policy.rollouts.kind === 'local') {
    // One session samples, scores DAPO's micro-batches and (with the KL term) the frozen reference.
    const generationRows = Math.min(config.policy.generationRows, train.groupSize * train.promptsPerBatch);
    sessions.push({ kind: 'inference', name: 'generation', rows: generationRows, sequence, scored: 0, chunk: PREFILL_CHUNK });
  }
  sessions.push({
    kind: 'inference',
    name: `log-probs${train.klCoefficient > 0 ? ' and the KL reference' : ''}${config.policy.rollouts.kind === 'vllm' ? ' (rollouts on vLLM)' : ''}`,
    rows: trainingRows,
    sequence,
    scored: config.policy.maxNewTokens,
  });
  sessions.push({
    kind: 'training',
    name: 'training step',
    tokens: trainingRows * sequence,
    rows: trainingRows,
    completionTokens: trainingRows * config.policy.maxNewTokens,
    recompute: config.policy.recompute,
  });
  const lora = train.lora ?? config.policy.lora;
  const prm = modelConfig(config.prm.backbone);
  // The PRM reads the planner's chat ('chat') or a plain rendering of the question and the step
  // ('text': estimated at the step's tokens plus 512 for the question).
  const prmSequence = config.prm.input === 'chat' ? sequence : config.policy.maxNewTokens + 512;
  const prmSessions: PlannedSession[] = [{ kind: 'scalar-head', name: 'step scoring', rows: config.prm.scoringBatchSize, sequence: prmSequence, training: false }];
  // The PRM's LoRA training graph (@agentflow/prm) recomputes its layers with the planner's setting.
  if (config.prm.lora) {
    prmSessions.push({ kind: 'scalar-head', name: 'training', rows: PRM_TRAINING_ROWS, sequence: prmSequence, training: true, recompute: config.policy.recompute });
  }
  return [
    { name: 'planner', config: planner, loraRank: lora.rank, trained: true, sessions },
    { name: 'PRM', config: prm, ...(config.prm.lora ? { loraRank: config.prm.lora.rank, trained: true } : {}), sessions: prmSessions },
  ];
}

/** The plan of the run on its device: the CPU's RAM, or `deviceMemoryGiB` (default an H200's 139 GiB) on CUDA. */
export function runMemoryPlan(config: RunConfig, machineBytes = totalmem()): MemoryPlan {
  const device = config.device === 'cuda' ? 'cuda' : 'cpu';
  const availableBytes = config.deviceMemoryGiB !== undefined ? config.deviceMemoryGiB * 2 ** 30 : device === 'cuda' ? DEFAULT_CUDA_GIB * 2 ** 30 : machineBytes;
  return planMemory({ device, models: runMemoryModels(config), availableBytes });
}
