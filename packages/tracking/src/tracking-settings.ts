import { z } from 'zod';

/**
 * The `tracking` block of a run config: each tracker is off unless its block is there.
 * `tracking: { tensorboard: {}, mlflow: { trackingUri: http://127.0.0.1:5000 } }` turns both on.
 */
export const trackingSettingsSchema = z
  .object({
    tensorboard: z
      .object({
        dir: z
          .string()
          .min(1)
          .optional()
          .describe("TensorBoard's log directory; each run writes its event files into <dir>/<run name>. Default: the run directory's tensorboard/."),
      })
      .strict()
      .optional()
      .describe('Write TensorBoard event files (scalars of every metrics row, the config as hparams, the summary). Off when absent.'),
    mlflow: z
      .object({
        trackingUri: z.url().describe('The MLflow tracking server, e.g. http://127.0.0.1:5000 (what MLFLOW_TRACKING_URI names).'),
        experiment: z.string().min(1).default('agentflow').describe('Experiment name; created when the server has none of that name.'),
        timeoutMs: z
          .number()
          .int()
          .positive()
          .default(10_000)
          .describe('Deadline of one request, and the most the end of a run waits for the tracker, in milliseconds.'),
        retries: z.number().int().min(0).max(10).default(2).describe('Further attempts of a request after a network error, 429 or 5xx (not after a deadline).'),
        tokenEnv: z
          .string()
          .min(1)
          .default('MLFLOW_TRACKING_TOKEN')
          .describe('Environment variable holding a bearer token for the server, sent when set (MLflow\'s own name by default).'),
      })
      .strict()
      .optional()
      .describe('Log to an MLflow tracking server over its REST API (params, metrics, the summary, report.html as an artifact). Off when absent.'),
    tags: z
      .record(z.string(), z.string())
      .optional()
      .describe("Tags of the run in the trackers, beside the seed and credit every run carries (every run of agentflow sweep is told apart by those two)."),
  })
  .strict()
  .describe('Experiment trackers, each off by default. A tracker that fails warns once and the run goes on; metrics.jsonl keeps every row.');

export type TrackingSettings = z.infer<typeof trackingSettingsSchema>;
