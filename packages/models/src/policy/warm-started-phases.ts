import { AgentFlowError } from '@agentflow/core';
import type { PlannedModel } from '../engine/memory-plan';
import type { LoraSettings } from '../lora/lora-adapter';
import { plannedWeightDtype } from './policy-dtype';
import type { TrainableSet } from './trainable-set';

/** What the warm phase trains: `trainable`, with the adapter's shape for LoRA. */
export interface WarmPhaseTraining {
  /** `{ kind: 'lora' }`: an adapter on the base folder; `{ kind: 'full' }`: the base folder's weights. */
  trainable: TrainableSet;
  /** The warm adapter's shape; unused when `trainable` is full. */
  lora: LoraSettings;
}

/** What the trained phase trains, on the warm phase's result. */
export interface TrainedPhaseTraining {
  /** `{ kind: 'lora' }`: an adapter (see `lora`); `{ kind: 'full' }`: every weight of the merged warm model. */
  trainable: TrainableSet;
  /**
   * With LoRA, the shape of a fresh adapter on the merged warm model (B = 0: its first step starts
   * exactly at the warm policy), or null: the warm adapter trained on, on the base folder (the warm
   * phase must train LoRA then). Unused when `trainable` is full.
   */
  lora: LoraSettings | null;
}

/**
 * Whether the trained phase goes on training the warm phase's adapter (LoRA after LoRA without an
 * adapter of its own) rather than starting on the merged warm model. Throws INVALID_ARGUMENT when
 * it would but there is no warm adapter (a full warm phase).
 */
export function trainsWarmAdapterOn(warm: WarmPhaseTraining, trained: TrainedPhaseTraining): boolean {
  if (trained.trainable.kind !== 'lora' || trained.lora !== null) return false;
  if (warm.trainable.kind === 'full') {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message:
        "The trained phase is LoRA without an adapter of its own (lora: null: the warm adapter trained on), but the warm phase trains every weight and leaves no adapter; give the trained phase's lora a shape (a fresh adapter on the warm model), or train it in full.",
    });
  }
  return true;
}

/**
 * The planner of a two-phase training as planMemory counts it (`loraRank`, `trained`,
 * `fullTraining` of a PlannedModel): trained in full when either phase is (the larger state, held
 * by one process); the reference a copy of the warm weights when the trained phase is full and
 * `klReference` (the KL term is on), none otherwise (a LoRA reference goes through the trained
 * policy's own session). Else LoRA of the trained phase's adapter (or the warm one's).
 */
export function plannedPhaseTraining(settings: {
  warm: WarmPhaseTraining;
  trained: TrainedPhaseTraining;
  klReference: boolean;
  /** The base weights' `policy.dtype` on `device`, of the folder `modelDir` (plannedWeightDtype); absent: float32. */
  weights?: Omit<Parameters<typeof plannedWeightDtype>[0], 'trainable'>;
}): Pick<PlannedModel, 'loraRank' | 'trained' | 'fullTraining' | 'weightDtype'> {
  const { warm, trained } = settings;
  const full = trained.trainable.kind === 'full' || warm.trainable.kind === 'full';
  const weightDtype = settings.weights ? { weightDtype: plannedWeightDtype({ ...settings.weights, trainable: full ? 'full' : 'lora' }) } : {};
  if (trained.trainable.kind === 'full') return { fullTraining: { reference: settings.klReference ? 'copy' : 'none' }, ...weightDtype };
  if (warm.trainable.kind === 'full') return { fullTraining: { reference: 'none' }, ...weightDtype };
  return { loraRank: (trained.lora ?? warm.lora).rank, trained: true, ...weightDtype };
}
