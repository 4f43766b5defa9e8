import { z } from 'zod';

/**
 * The config of `agentflow run` and its stages. Parsed once at the edge; everything
 * inward takes the typed value. Unknown keys are errors, so a typo never passes silently.
 */
export const runConfigSchema = z
  .object({
    name: z.string().min(1).default('agentflow-run').describe('Name of the run, used in reports.'),
    seed: z.number().int().default(0).describe('Seed of every random choice in the run.'),
    out: z.string().default('runs/latest').describe('Run directory; every stage appends there.'),
    device: z.enum(['auto', 'cuda', 'cpu']).default('auto').describe('ONNX Runtime execution provider.'),
  })
  .strict();

export type RunConfig = z.infer<typeof runConfigSchema>;
