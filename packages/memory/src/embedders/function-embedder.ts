import { AgentFlowError, formatZodIssues } from '@agentflow/core';
import { z } from 'zod';
import { type Embedder, checkEmbeddings, embedInBatches, normalizeVector } from './embedder';

const functionEmbedderSettingsSchema = z.object({
  dimensions: z.number().int().positive().describe('Size of the vectors `embed` returns (the hidden size of the model).'),
  embed: z
    .custom<(texts: string[]) => Promise<number[][]>>((value) => typeof value === 'function', 'expected a function')
    .describe('Embeds a batch of texts: for Qwen3, mean-pooled last hidden states (see meanPoolHiddenStates).'),
  batchSize: z.number().int().positive().default(16).describe('Texts per call to `embed` (bounds memory of one forward pass).'),
  normalize: z
    .boolean()
    .default(true)
    .describe('Scale each vector to unit length; cosine search does not need it, but dot-product consumers do.'),
});

/** Settings of {@link createFunctionEmbedder}. */
export type FunctionEmbedderSettings = z.input<typeof functionEmbedderSettingsSchema>;

/**
 * An embedder around an injected function: how the trainer plugs in the local Qwen3 model
 * (mean-pooled hidden states) without this package importing @agentflow/models. The output
 * of the function is checked: one finite vector of `dimensions` numbers per text.
 */
export function createFunctionEmbedder(settings: FunctionEmbedderSettings): Embedder {
  const parsed = functionEmbedderSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentFlowError({
      code: 'INVALID_CONFIG',
      message: `Invalid function embedder settings:\n${formatZodIssues(parsed.error, 'settings').join('\n')}`,
    });
  }
  const { dimensions, embed, batchSize, normalize } = parsed.data;
  return {
    dimensions,
    embed: (texts) =>
      embedInBatches(texts, batchSize, async (batch) => {
        const vectors = checkEmbeddings(await embed(batch), batch.length, dimensions, 'The injected embed function');
        return normalize ? vectors.map(normalizeVector) : vectors;
      }),
  };
}

/**
 * Mean of the hidden states over the tokens the attention mask keeps: the sentence vector
 * of a decoder such as Qwen3 when it has no pooling head.
 *
 * @param hiddenStates last-layer hidden states, row-major `[batch, sequence, hidden]`
 * @param attentionMask 1 for real tokens, 0 for padding, `[batch, sequence]`
 * @returns `[batch, hidden]`
 */
export function meanPoolHiddenStates(
  hiddenStates: ArrayLike<number>,
  attentionMask: ArrayLike<number>,
  shape: readonly [batch: number, sequence: number, hidden: number],
): number[][] {
  const [batch, sequence, hidden] = shape;
  if (hiddenStates.length !== batch * sequence * hidden || attentionMask.length !== batch * sequence) {
    throw new AgentFlowError({
      code: 'SHAPE_MISMATCH',
      message: `meanPoolHiddenStates: got ${hiddenStates.length} hidden values and ${attentionMask.length} mask values for shape [${shape.join(', ')}].`,
    });
  }
  const pooled: number[][] = [];
  for (let row = 0; row < batch; row++) {
    const sum = new Float64Array(hidden); // [hidden]
    let kept = 0;
    for (let position = 0; position < sequence; position++) {
      const weight = attentionMask[row * sequence + position] ?? 0;
      if (weight === 0) continue;
      kept += weight;
      const offset = (row * sequence + position) * hidden;
      for (let unit = 0; unit < hidden; unit++) sum[unit]! += weight * (hiddenStates[offset + unit] ?? 0);
    }
    // A fully padded row (empty text) pools to zeros rather than NaN.
    pooled.push(Array.from(sum, (value) => (kept === 0 ? 0 : value / kept)));
  }
  return pooled;
}
