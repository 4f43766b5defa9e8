import { z } from 'zod';

/** Input of every search tool: a query and how many results. */
export const searchInputSchema = z.object({
  query: z.string().min(1).describe('What to search for (keywords or a question).'),
  k: z.number().int().min(1).max(20).optional().describe('How many results to return (default 3).'),
});
export type SearchInput = z.infer<typeof searchInputSchema>;
