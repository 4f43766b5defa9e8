import { z } from 'zod';

/** The options of `agentflow train-prm`, validated once at the edge. Defaults follow @agentflow/prm's. */
export const trainPrmOptionsSchema = z
  .object({
    data: z.string().min(1).describe('Labelled examples JSONL (agentflow label writes it).'),
    out: z.string().min(1).describe('Checkpoint folder; rewritten whenever validation improves.'),
    preset: z.enum(['tiny', 'qwen3-0.6b-shape']).default('tiny').describe('Random backbone shape when --backbone is not given.'),
    backbone: z.string().optional().describe('A Hugging Face Qwen3 folder to use as the backbone instead of a random one.'),
    seed: z.coerce.number().int().default(0).describe('Seed of the random backbone, the split and the batch order.'),
    loss: z.enum(['mse', 'bce']).default('mse').describe('MSE on soft labels (reference) or binary cross-entropy.'),
    epochs: z.coerce.number().int().positive().default(200).describe('Passes over the training set at most.'),
    batchSize: z.coerce.number().int().positive().default(32).describe('Examples per optimiser step.'),
    learningRate: z.coerce.number().positive().default(0.01).describe('Head learning rate (AdamW).'),
    loraLearningRate: z.coerce.number().positive().default(2e-4).describe('LoRA learning rate (AdamW).'),
    validationFraction: z.coerce.number().min(0).lt(1).default(0.2).describe('Share of trajectories held out.'),
    patience: z.coerce.number().int().positive().default(10).describe('Epochs without improvement before stopping.'),
    loraRank: z.coerce.number().int().nonnegative().default(0).describe('LoRA rank on the backbone; 0 trains the head only.'),
    loraAlpha: z.coerce.number().positive().optional().describe('LoRA alpha (default 2 x rank).'),
    headHidden: z.coerce.number().int().nonnegative().default(0).describe("Units of a ReLU layer in the head before its score; 0: a linear head."),
    maxTokens: z.coerce.number().int().positive().default(512).describe('Longest input in tokens (the start is cut).'),
    device: z.enum(['auto', 'cuda', 'cpu']).default('auto').describe('ONNX Runtime execution provider.'),
  })
  .strict();
export type TrainPrmOptions = z.infer<typeof trainPrmOptionsSchema>;
