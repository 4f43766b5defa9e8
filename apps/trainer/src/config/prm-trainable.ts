import type { LoraShape } from '@agentflow/models';
import { type PrmTrainable, prmTrainableSchema } from '@agentflow/prm';

/**
 * `prm.trainable`: what trains with the PRM's head, @agentflow/prm's choice as it is (head, LoRA,
 * or the backbone in full). `prm.lora`, the key that came first, is its earlier spelling: absent,
 * `prm.trainable` is `{ kind: lora, ...prm.lora }` when `prm.lora` is set and `{ kind: head }`
 * otherwise; both at once are refused (see {@link prmTrainableConflict}).
 */
export const prmTrainableConfigSchema = prmTrainableSchema
  .optional()
  .describe(
    'What trains with the PRM head: { kind: head } (the head alone, on frozen features), { kind: lora, rank, alpha } (LoRA on the backbone; prm.lora is the earlier spelling of it) or { kind: full, frozen?: [patterns] } (every backbone weight but the frozen ones, at prm.backboneLearningRate). Absent (the default): lora when prm.lora is set, head otherwise. Not with prm.lora set.',
  );

/** The PRM block's keys this file reads. */
interface PrmBlock {
  lora: LoraShape | null;
  trainable?: PrmTrainable | undefined;
}

/** Why `prm.trainable` and `prm.lora` contradict each other, or undefined when they do not. */
export function prmTrainableConflict(prm: PrmBlock): string | undefined {
  if (prm.lora === null || prm.trainable === undefined) return undefined;
  const spelled = prm.trainable.kind === 'lora' ? `LoRA rank ${prm.trainable.rank}` : prm.trainable.kind;
  return `prm.lora (LoRA rank ${prm.lora.rank}) and prm.trainable (${spelled}) both say what trains with the PRM head; prm.lora is the earlier spelling of prm.trainable: { kind: lora, rank, alpha }: set prm.lora=null to keep prm.trainable, or leave prm.trainable out`;
}
