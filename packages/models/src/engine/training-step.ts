import { AgentFlowError, type PolicyObjective, type PolicyTrainingBatch, type PolicyTrainingStats } from '@agentflow/core';
import type { HostTensor, TensorRuntime, TensorSession } from '@agentflow/tensor';
import {
  buildPolicyTrainingGraph,
  COMPLETION_MASK,
  COMPLETION_POSITIONS,
  LOSS,
  metricName,
  type PolicyObjectiveGraph,
  type PolicyTrainingGraph,
  perTokenInputName,
  TOKEN_WEIGHTS,
  type TrainedTensors,
} from '../graph/policy-training-graph';
import { ATTENTION_MASK, type AttentionSettings, INPUT_IDS, POSITION_IDS } from '../graph/decoder-graph';
import { type LoraLayout, loraFeeds } from '../graph/lora-inputs';
import type { RowBlockSettings } from '../graph/row-blocked-layer';
import type { LoraAdapter } from '../lora/lora-adapter';
import type { DecoderModel } from '../weights/random-model';
import { completionPositions, packScoringBatch } from './batch-packing';
import { createGraphSession } from './session-loader';

/** The loss, gradients by trained tensor (LoRA input name, or weight name), and stats of one micro-batch. */
export interface TrainingStepResult {
  stats: PolicyTrainingStats;
  gradients: Map<string, Float32Array>;
}

/** Runs training graphs, one session per distinct objective, built on first use. */
export interface PolicyTrainer {
  /** One micro-batch: with LoRA, under `adapter` (required, of the trainer's layout); full-parameter, under the model's weights as they are now (no adapter). */
  run(batch: PolicyTrainingBatch, adapter?: LoraAdapter): Promise<TrainingStepResult>;
  release(): Promise<void>;
}

/** Settings for {@link createPolicyTrainer}: LoRA (`lora`) or full-parameter (`weights`) training. */
export type PolicyTrainerSettings = PolicyTrainerCommonSettings &
  (
    | {
        /** Differentiate with respect to LoRA matrices of this layout, fed from the adapter of each run. */
        lora: LoraLayout;
        weights?: undefined;
      }
    | {
        /**
         * Differentiate with respect to these base weights (Hugging Face names; full-parameter
         * training): gradients come back by weight name, and each run reads the weights' arrays
         * as they are then (see `hostWeights` for CUDA).
         */
        weights: readonly string[];
        lora?: undefined;
      }
  );

/** What both kinds of {@link PolicyTrainerSettings} share. */
export interface PolicyTrainerCommonSettings {
  model: DecoderModel;
  runtime: TensorRuntime;
  /**
   * Feed the weights from the model's arrays on every run, on CUDA too (SessionSettings.hostWeights),
   * so in-place updates reach the training session; default false (a CUDA session keeps its own copy).
   * Full-parameter training on CUDA needs it.
   */
  hostWeights?: boolean;
  /** Recompute layer activations in the backward pass (see TrainingGraphSettings); default false. */
  recompute?: boolean;
  /** How the training graph computes attention (see TrainingGraphSettings); default blocked. */
  attention?: AttentionSettings;
  /** Each layer's row-wise parts over blocks of rows, for long rows (see TrainingGraphSettings); default off. */
  rowBlocks?: RowBlockSettings;
  /** The objectives this trainer can train; each batch is trained with the one of its `objective.kind` (a later one of the same kind replaces an earlier). */
  objectives: readonly PolicyObjectiveGraph[];
  padTokenId?: number;
}

/** [batch, completion] float rows, right-padded with zeros (at least one column). */
function packRows(rows: readonly (readonly number[])[], width: number, what: string, lengths: readonly number[]): HostTensor<'float32'> {
  const data = new Float32Array(rows.length * width);
  rows.forEach((row, index) => {
    if (row.length !== lengths[index]) {
      throw new AgentFlowError({
        code: 'SHAPE_MISMATCH',
        message: `${what} row ${index} has ${row.length} values but completion ${index} has ${lengths[index]} tokens.`,
        details: { row: index },
      });
    }
    data.set(row, index * width);
  });
  return { dtype: 'float32', shape: [rows.length, width], data };
}

/** The trained tensors the settings name: exactly one of `lora` and `weights`. */
function trainedTensors(settings: PolicyTrainerSettings): TrainedTensors {
  const { lora, weights } = settings;
  if (lora !== undefined && weights === undefined) return { kind: 'lora', layout: lora };
  if (weights !== undefined && lora === undefined) return { kind: 'full', weights: [...weights] };
  throw new AgentFlowError({
    code: 'INVALID_ARGUMENT',
    message: `createPolicyTrainer needs exactly one of \`lora\` (a LoRA layout) and \`weights\` (the base weights to train); got ${lora === undefined ? 'neither' : 'both'}.`,
  });
}

/** The LoRA feeds of a run: the adapter's matrices with LoRA, none full-parameter. */
function adapterFeeds(trained: TrainedTensors, adapter: LoraAdapter | undefined): Record<string, HostTensor> {
  if (trained.kind === 'lora' && adapter === undefined) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'This trainer trains LoRA matrices: pass the adapter to run(batch, adapter).' });
  }
  if (trained.kind === 'full' && adapter !== undefined) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: 'This trainer trains the base weights (full-parameter): it feeds no LoRA adapter; call run(batch) without one.',
    });
  }
  return trained.kind === 'lora' ? loraFeeds(trained.layout, adapter!) : {};
}

export function createPolicyTrainer(settings: PolicyTrainerSettings): PolicyTrainer {
  const trained = trainedTensors(settings);
  const sessions = new Map<string, Promise<{ built: PolicyTrainingGraph; session: TensorSession }>>();
  const objectives = new Map(settings.objectives.map((objective) => [objective.kind, objective]));
  const sessionFor = (objective: PolicyObjective) => {
    const key = JSON.stringify(objective);
    let entry = sessions.get(key);
    if (!entry) {
      const objectiveGraph = objectives.get(objective.kind);
      if (!objectiveGraph) {
        throw new AgentFlowError({
          code: 'NOT_IMPLEMENTED',
          message: `No objective graph for kind ${JSON.stringify(objective.kind)}; pass one in \`objectives\` (known: ${[...objectives.keys()].join(', ')}).`,
          details: { kind: objective.kind },
        });
      }
      entry = (async () => {
        const built = buildPolicyTrainingGraph(settings.model, trained, objectiveGraph, objective, {
          recompute: settings.recompute ?? false,
          ...(settings.attention ? { attention: settings.attention } : {}),
          ...(settings.rowBlocks ? { rowBlocks: settings.rowBlocks } : {}),
        });
        const session = await createGraphSession(settings.runtime, built.graph, `qwen3-training-${objective.kind}`, {
          hostWeights: settings.hostWeights ?? false,
        });
        return { built, session };
      })();
      sessions.set(key, entry);
    }
    return entry;
  };

  return {
    async run(batch, adapter) {
      const { built, session } = await sessionFor(batch.objective);
      const packed = packScoringBatch(batch, settings.model.config.vocabSize, settings.padTokenId ?? 0);
      const { width, positions, mask } = completionPositions(packed);
      const feeds: Record<string, HostTensor> = {
        [INPUT_IDS]: packed.inputIds,
        [ATTENTION_MASK]: packed.attentionMask,
        [POSITION_IDS]: packed.positionIds,
        target_ids: packed.targetIds,
        [COMPLETION_POSITIONS]: positions,
        [COMPLETION_MASK]: mask,
        [TOKEN_WEIGHTS]: packRows(batch.tokenWeights, width, 'tokenWeights', packed.completionLengths),
        ...adapterFeeds(trained, adapter),
      };
      for (const field of built.perTokenFields) {
        const rows = batch[field];
        if (!rows) {
          throw new AgentFlowError({
            code: 'INVALID_ARGUMENT',
            message: `The ${batch.objective.kind} objective needs ${field} in the training batch.`,
            details: { field },
          });
        }
        feeds[perTokenInputName(field)] = packRows(rows, width, field, packed.completionLengths);
      }
      const fetches = [LOSS, ...built.gradients.values(), ...built.metrics.map(metricName)];
      const outputs = await session.run(feeds, fetches);
      const gradients = new Map<string, Float32Array>();
      for (const [input, output] of built.gradients) gradients.set(input, outputs[output]!.data as Float32Array);
      const stats: PolicyTrainingStats = {
        loss: (outputs[LOSS]!.data as Float32Array)[0]!,
        tokens: packed.completionLengths.reduce((sum, length) => sum + length, 0),
      };
      for (const metric of built.metrics) stats[metric] = (outputs[metricName(metric)]!.data as Float32Array)[0]!;
      return { stats, gradients };
    },
    async release() {
      // A session that failed to build has nothing to release (its run already reported why).
      for (const entry of sessions.values()) await (await entry.catch(() => undefined))?.session.release();
      sessions.clear();
    },
  };
}
