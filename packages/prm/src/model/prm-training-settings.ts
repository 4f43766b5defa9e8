import { z } from 'zod';
import { PRM_LOSSES } from './prm-loss';

/**
 * Examples per optimiser step when `batchSize` is not set. With LoRA on the backbone (or the backbone trained in full) each step is
 * one forward and backward pass over that many inputs, so it is also the rows of the PRM's
 * training session in a memory plan.
 */
export const DEFAULT_PRM_TRAINING_BATCH_SIZE = 32;

/** How `trainPrm` fits the head. Defaults are documented where they come from. */
export const prmTrainingSettingsSchema = z
  .object({
    loss: z
      .enum(PRM_LOSSES)
      .default('mse')
      .describe('MSE on soft labels (the reference system) or binary cross-entropy (labels as probabilities).'),
    epochs: z.number().int().positive().default(200).describe('Passes over the training set at most.'),
    batchSize: z.number().int().positive().default(DEFAULT_PRM_TRAINING_BATCH_SIZE).describe('Examples per optimiser step.'),
    learningRate: z
      .number()
      .positive()
      .default(0.01)
      .describe('AdamW learning rate; 1e-2 suits a linear head on frozen features (Adam, Kingma & Ba 2015, uses 1e-3 for deep nets).'),
    loraLearningRate: z
      .number()
      .positive()
      .default(2e-4)
      .describe('AdamW learning rate of the LoRA matrices, when the PRM has LoRA (QLoRA, Dettmers et al. 2023: 2e-4 for 7B-13B).'),
    backboneLearningRate: z
      .number()
      .positive()
      .default(1e-5)
      .describe(
        "AdamW learning rate of the backbone's own weights, when the PRM trains it in full (trainable kind full); the head keeps `learningRate`. Default 1e-5, the order of full fine-tuning of a pretrained reward model (InstructGPT, Ouyang et al. 2022: 9e-6 for its 6B reward model); a random tiny backbone takes 1e-3.",
      ),
    maxGradNorm: z
      .number()
      .nonnegative()
      .default(1)
      .describe(
        'Trained in full: the gradients of the backbone and the head are clipped together to this global L2 norm before each step (0: no clipping). Default 1.0, transformers\' TrainingArguments.max_grad_norm. Head-only and LoRA training do not clip.',
      ),
    weightDecay: z
      .number()
      .nonnegative()
      .default(0)
      .describe(
        "Decoupled weight decay of the head weight (not the bias) and, trained in full, of the backbone's matrices (not its norms or biases: models' decaysWeight).",
      ),
    validationFraction: z
      .number()
      .min(0)
      .lt(1)
      .default(0.2)
      .describe('Share of trajectories held out for validation; split by trajectory so no trajectory is on both sides.'),
    patience: z
      .number()
      .int()
      .positive()
      .default(10)
      .describe('Stop after this many epochs without a better validation loss; the best parameters are kept.'),
    seed: z.number().int().default(0).describe('Seed of the split and of the batch order.'),
    recompute: z
      .boolean()
      .default(false)
      .describe(
        "With LoRA on the backbone or the backbone trained in full: recompute each layer's activations in the backward pass instead of keeping them (the same gradients for about one more forward pass; the training step keeps the residual stream at each layer instead of every layer's activations).",
      ),
  })
  .strict();
export type PrmTrainingSettings = z.input<typeof prmTrainingSettingsSchema>;
export type PrmTrainingConfig = z.output<typeof prmTrainingSettingsSchema>;

/** One epoch of training, as `trainPrm` reports it. */
export interface PrmEpochRecord {
  epoch: number;
  trainLoss: number;
  /** Loss of the configured kind on the validation set (training loss when there is none). */
  validationLoss: number;
  validationMse: number;
}

/** What `trainPrm` returns. */
export interface PrmTrainingReport {
  epochs: PrmEpochRecord[];
  bestEpoch: number;
  stoppedEarly: boolean;
  trainExamples: number;
  validationExamples: number;
  /** Mean label of the training examples: the constant predictor the PRM must beat. */
  trainingLabelMean: number;
}
