import { z } from 'zod';

const modelSource = z
  .union([
    z.object({ preset: z.enum(['tiny']).describe('Create a random model of this preset on the first run.') }).strict(),
    z.object({ path: z.string().min(1).describe('A Hugging Face style folder: config.json, *.safetensors, tokenizer.json.') }).strict(),
  ])
  .describe('Where the model comes from: a preset created on the first run, or a local folder.');

const datasetSource = z
  .object({
    path: z.string().min(1).describe('A dataset file: AgentFlow JSON benchmark, the AIME CSV, or JSONL.'),
    format: z.enum(['agentflow-json', 'aime-csv', 'jsonl']).describe('File format.'),
    years: z
      .tuple([z.number().int(), z.number().int()])
      .optional()
      .describe('Keep only rows whose id starts with a year in this inclusive range (AIME CSV).'),
    limit: z.number().int().positive().optional().describe('Keep the first N items after filtering.'),
  })
  .strict();

const chatEndpoint = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('ollama'),
      url: z.string().url().default('http://127.0.0.1:11434').describe("Ollama server; its native /api/chat is used."),
      model: z.string().min(1).describe('Ollama model tag, e.g. qwen2.5:7b-instruct.'),
    })
    .strict(),
  z
    .object({
      kind: z.literal('openai'),
      baseUrl: z.string().url().describe('OpenAI-compatible base URL, e.g. https://api.deepseek.com/v1.'),
      model: z.string().min(1),
      apiKeyEnv: z.string().min(1).default('OPENAI_API_KEY').describe('Environment variable holding the API key.'),
    })
    .strict(),
]);

/**
 * The config of `agentflow run` and its stages. Parsed once at the edge; everything
 * inward takes the typed value. Unknown keys are errors, so a typo never passes silently.
 * Defaults are the embedded default run (configs/default.yaml spells them out).
 */
export const runConfigSchema = z
  .object({
    name: z.string().min(1).default('agentflow-default').describe('Name of the run, used in reports.'),
    seed: z.number().int().default(0).describe('Seed of every random choice in the run.'),
    out: z.string().default('runs/default').describe('Run directory; every stage appends there.'),
    device: z.enum(['auto', 'cuda', 'cpu']).default('auto').describe('ONNX Runtime execution provider.'),
    task: z
      .discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('world'),
            seed: z.number().int().default(7).describe('Seed of the generated task world.'),
            trainTasks: z.number().int().positive().default(160),
            testTasks: z.number().int().positive().default(80),
          })
          .strict(),
        z
          .object({
            kind: z.literal('datasets'),
            train: datasetSource,
            test: datasetSource,
            leakageThreshold: z.number().min(0).max(1).default(0.5).describe('Near-duplicate score that counts as a leak.'),
            allowLeakage: z.boolean().default(false).describe('Run even when test items leak into training.'),
          })
          .strict(),
      ])
      .default({ kind: 'world', seed: 7, trainTasks: 160, testTasks: 80 })
      .describe('Training and held-out tasks.'),
    policy: z
      .object({
        model: modelSource.default({ preset: 'tiny' }),
        lora: z
          .object({
            rank: z.number().int().positive().default(8),
            alpha: z.number().positive().default(16),
            targetModules: z.array(z.string()).default(['q_proj', 'k_proj', 'v_proj', 'o_proj']),
          })
          .strict()
          .nullable()
          .default(null)
          .describe('LoRA on the planner; null trains every weight (tiny models only).'),
        temperature: z.number().positive().default(1).describe('Sampling temperature of rollouts and evaluation.'),
        maxNewTokens: z.number().int().positive().default(96).describe('Token limit of one planner decision.'),
        maxSteps: z.number().int().positive().default(5).describe('Planner decisions per task at most.'),
      })
      .strict()
      .default({ model: { preset: 'tiny' }, lora: null, temperature: 1, maxNewTokens: 96, maxSteps: 5 }),
    fixedModules: chatEndpoint
      .nullable()
      .default(null)
      .describe('Back end of the fixed verifier and generator; null uses rules and the finish input.'),
    label: z
      .discriminatedUnion('kind', [
        z.object({ kind: z.literal('monte-carlo'), samples: z.number().int().positive().default(4) }).strict(),
        z
          .object({
            kind: z.literal('judge'),
            endpoint: chatEndpoint,
          })
          .strict(),
      ])
      .default({ kind: 'monte-carlo', samples: 4 }),
    prm: z
      .object({
        backbone: modelSource.default({ preset: 'tiny' }),
        epochs: z.number().int().positive().default(30),
        learningRate: z.number().positive().default(3e-3),
        validationFraction: z.number().min(0.05).max(0.5).default(0.2),
      })
      .strict()
      .default({ backbone: { preset: 'tiny' }, epochs: 30, learningRate: 3e-3, validationFraction: 0.2 }),
    train: z
      .object({
        credit: z.enum(['process', 'outcome', 'mix']).default('process').describe('Process (PRM), outcome broadcast (Flow-GRPO), or their mix.'),
        steps: z.number().int().positive().default(20),
        groupSize: z.number().int().min(2).default(8).describe('Rollouts per prompt (G).'),
        promptsPerStep: z.number().int().positive().default(4),
        learningRate: z.number().positive().default(1e-3),
        evalEvery: z.number().int().positive().default(5),
      })
      .strict()
      .default({ credit: 'process', steps: 20, groupSize: 8, promptsPerStep: 4, learningRate: 1e-3, evalEvery: 5 }),
  })
  .strict();

export type RunConfig = z.infer<typeof runConfigSchema>;
