import { z } from 'zod';

/** The options of `agentflow label`, validated once at the edge. */
export const labelOptionsSchema = z
  .object({
    labeller: z
      .enum(['judge', 'consensus'])
      .default('judge')
      .describe('judge: ask an LLM judge; consensus: keep steps where a judged and a Monte-Carlo file agree.'),
    trajectories: z.string().optional().describe('Trajectories JSONL (core Trajectory per line), for the judge.'),
    out: z.string().min(1).describe('Where to write the labelled examples (JSONL, replaced atomically).'),
    judgeModel: z.string().min(1).default('deepseek-chat').describe('Model id of the judge (DeepSeek by default).'),
    endpoint: z
      .url()
      .default('https://api.deepseek.com')
      .describe('Base URL of the OpenAI-compatible endpoint (DeepSeek by default).'),
    apiKeyEnv: z
      .string()
      .default('DEEPSEEK_API_KEY')
      .describe("Environment variable holding the API key; '' for a server without authentication."),
    responseFormat: z
      .enum(['json_schema', 'json_object', 'none'])
      .default('json_object')
      .describe('How JSON is requested; DeepSeek supports json_object.'),
    concurrency: z.coerce.number().int().positive().default(8).describe('Judge calls in flight at once.'),
    cache: z.string().optional().describe('Judge cache JSONL; default: <out>.judge-cache.jsonl.'),
    inputPrice: z.coerce.number().nonnegative().optional().describe('USD per million prompt tokens (default DeepSeek).'),
    outputPrice: z.coerce.number().nonnegative().optional().describe('USD per million completion tokens (default DeepSeek).'),
    judged: z.string().optional().describe('Judge-labelled examples JSONL, for --labeller consensus.'),
    monteCarlo: z.string().optional().describe('Monte-Carlo-labelled examples JSONL, for --labeller consensus.'),
    judgeThreshold: z.coerce.number().min(0).max(1).default(0.5).describe('Consensus: judge score at or above which a step is right.'),
  })
  .refine((options) => options.labeller !== 'judge' || options.trajectories !== undefined, {
    message: '--labeller judge needs --trajectories FILE',
    path: ['trajectories'],
  })
  .refine((options) => options.labeller !== 'consensus' || (options.judged !== undefined && options.monteCarlo !== undefined), {
    message: '--labeller consensus needs --judged FILE and --monte-carlo FILE',
    path: ['judged'],
  });
export type LabelOptions = z.infer<typeof labelOptionsSchema>;
