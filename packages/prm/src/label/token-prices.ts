import { z } from 'zod';

/**
 * What a judge's tokens cost, in US dollars per million. Defaults are DeepSeek's list
 * prices for `deepseek-chat` (https://api-docs.deepseek.com/quick_start/pricing, as
 * published on 2025-09-29 with DeepSeek-V3.2-Exp): $0.28 per million input tokens on a
 * cache miss, $0.42 per million output tokens. Core's usage record does not split cache
 * hits ($0.028), so every input token is charged at the miss price: an upper bound.
 */
export const tokenPricesSchema = z
  .object({
    inputUsdPerMillion: z
      .number()
      .nonnegative()
      .default(0.28)
      .describe('USD per million prompt tokens (DeepSeek deepseek-chat, cache miss, 2025-09-29 price page).'),
    outputUsdPerMillion: z
      .number()
      .nonnegative()
      .default(0.42)
      .describe('USD per million completion tokens (DeepSeek deepseek-chat, 2025-09-29 price page).'),
  })
  .strict();
export type TokenPrices = z.infer<typeof tokenPricesSchema>;

/** The cost of one call from its token usage. */
export function costOfUsage(usage: { promptTokens: number; completionTokens: number }, prices: TokenPrices): number {
  return (usage.promptTokens * prices.inputUsdPerMillion + usage.completionTokens * prices.outputUsdPerMillion) / 1e6;
}
