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
    out: z.string().optional().describe('Run directory; every stage appends there (default runs/<date-time>).'),
    device: z.enum(['auto', 'cuda', 'cpu']).default('auto').describe('ONNX Runtime execution provider.'),
    task: z
      .discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('world'),
            seed: z.number().int().default(7).describe('Seed of the generated task world.'),
            entities: z.number().int().positive().default(24).describe('Entities in the world corpus (fewer: each name recurs more, so copying it is learned).'),
            trainTasks: z.number().int().positive().default(800),
            testTasks: z.number().int().positive().default(60),
            levels: z.array(z.number().int().min(1).max(3)).min(1).default([1, 2]).describe('Lookups per question.'),
            maxValue: z.number().int().min(2).default(9).describe('Largest number in a fact.'),
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
      .default({ kind: 'world', seed: 7, entities: 24, trainTasks: 800, testTasks: 60, levels: [1, 2], maxValue: 9 })
      .describe('Training and held-out tasks.'),
    policy: z
      .object({
        model: modelSource.default({ preset: 'tiny' }),
        shape: z
          .object({
            hiddenSize: z.number().int().positive().default(128),
            layers: z.number().int().positive().default(2),
            heads: z.number().int().positive().default(4),
            keyValueHeads: z.number().int().positive().default(4),
            intermediateSize: z.number().int().positive().default(256),
            embeddingStd: z.number().positive().default(0.5).describe('Std of the random embedding table (HF draws 0.02; LoRA cannot train it).'),
            sharedDirection: z
              .number()
              .nonnegative()
              .default(1)
              .describe('One fixed random direction added to every embedding, relative to the token part: gives q and k a constant to attend by position.'),
            wordClassDirection: z
              .number()
              .nonnegative()
              .default(1)
              .describe('One direction per word class (names, numbers, counted things) added to its tokens, relative to the token part.'),
            identityInit: z.number().nonnegative().default(1.5).describe('Added to the diagonal of v_proj and o_proj: a base that passes tokens on (copying).'),
            ropeTheta: z
              .number()
              .positive()
              .default(10000)
              .describe('RoPE base. A small base gives every frequency pair a short period: sharp attention by relative position in short prompts.'),
            qkNormGain: z
              .number()
              .positive()
              .default(3)
              .describe('Initial weight of q_norm and k_norm. LoRA cannot train norms, and at 1 an attention logit is at most sqrt(head_dim): too flat to copy one token.'),
            bpeMerges: z.number().int().nonnegative().default(300).describe('BPE merges learned between the whole-word tokens (names, numbers).'),
          })
          .strict()
          .default({ hiddenSize: 128, layers: 2, heads: 4, keyValueHeads: 4, intermediateSize: 256, embeddingStd: 0.5, sharedDirection: 1, wordClassDirection: 1, identityInit: 1.5, ropeTheta: 10000, qkNormGain: 3, bpeMerges: 300 })
          .describe('Shape of the random planner created for the embedded default (preset: tiny).'),
        lora: z
          .object({
            rank: z.number().int().positive().default(128),
            alpha: z.number().positive().default(256),
          })
          .strict()
          .default({ rank: 128, alpha: 256 })
          .describe('LoRA on every linear module of the planner (PEFT "all-linear"); rank = hidden is full rank.'),
        temperature: z.number().positive().default(1).describe('Sampling temperature of rollouts and evaluation.'),
        maxNewTokens: z.number().int().positive().default(48).describe('Token limit of one planner decision.'),
        maxSteps: z.number().int().positive().default(5).describe('Planner decisions per task at most.'),
      })
      .strict()
      .refine((policy) => policy.shape.hiddenSize % policy.shape.heads === 0, {
        message: 'policy.shape.hiddenSize must be a multiple of policy.shape.heads',
      })
      .default({
        model: { preset: 'tiny' },
        shape: { hiddenSize: 128, layers: 2, heads: 4, keyValueHeads: 4, intermediateSize: 256, embeddingStd: 0.5, sharedDirection: 1, wordClassDirection: 1, identityInit: 1.5, ropeTheta: 10000, qkNormGain: 3, bpeMerges: 300 },
        lora: { rank: 128, alpha: 256 },
        temperature: 1,
        maxNewTokens: 48,
        maxSteps: 5,
      }),
    warmStart: z
      .object({
        epochs: z.number().int().nonnegative().default(20).describe('Passes over the expert demonstrations (0 skips the warm start).'),
        demonstrations: z
          .number()
          .int()
          .positive()
          .nullable()
          .default(200)
          .describe('Learn from the demonstrations of the first N training tasks only (null: all); DAPO still draws from every training task.'),
        learningRate: z.number().positive().default(1e-2).describe('Peak learning rate, after a linear warm-up.'),
        schedule: z
          .enum(['cosine', 'constant'])
          .default('cosine')
          .describe('After the warm-up: cosine down to a tenth of the peak by the last epoch, or constant (then a run of E epochs is the first E epochs of a longer one).'),
        warmupSteps: z.number().int().nonnegative().default(20),
        batchSize: z.number().int().positive().default(16),
      })
      .strict()
      .default({ epochs: 20, demonstrations: 200, learningRate: 1e-2, schedule: 'cosine', warmupSteps: 20, batchSize: 16 }),
    fixedModules: chatEndpoint
      .nullable()
      .default(null)
      .describe('Back end of the fixed verifier and generator; null uses rules and the finish input.'),
    collect: z
      .object({
        rolloutsPerTask: z.number().int().positive().default(1).describe('Trajectories kept per training task.'),
        maxTasks: z.number().int().positive().default(160).describe('Training tasks the collect stage runs at most.'),
      })
      .strict()
      .default({ rolloutsPerTask: 1, maxTasks: 160 }),
    label: z
      .discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('monte-carlo'),
            samples: z.number().int().positive().default(4).describe('Completions per step (Math-Shepherd uses 8).'),
            maxTrajectories: z.number().int().positive().default(160).describe('Collected trajectories to label at most.'),
          })
          .strict(),
        z
          .object({
            kind: z.literal('judge'),
            endpoint: chatEndpoint,
          })
          .strict(),
      ])
      .default({ kind: 'monte-carlo', samples: 4, maxTrajectories: 160 }),
    prm: z
      .object({
        backbone: modelSource.default({ preset: 'tiny' }),
        lora: z
          .object({ rank: z.number().int().positive(), alpha: z.number().positive() })
          .strict()
          .nullable()
          .default({ rank: 16, alpha: 32 })
          .describe('LoRA on the PRM backbone, trained with the head; null trains the head alone on frozen features.'),
        loraLearningRate: z.number().positive().default(1e-3).describe('Learning rate of the PRM LoRA matrices.'),
        epochs: z.number().int().positive().default(80).describe('PRM training epochs at most (the default run measured its best at 55).'),
        patience: z.number().int().positive().default(12).describe('Epochs without a better validation loss before the PRM stops (best parameters kept).'),
        validationFraction: z.number().min(0.05).max(0.5).default(0.25),
      })
      .strict()
      .default({ backbone: { preset: 'tiny' }, lora: { rank: 16, alpha: 32 }, loraLearningRate: 1e-3, epochs: 80, patience: 12, validationFraction: 0.25 }),
    train: z
      .object({
        credit: z.enum(['process', 'outcome', 'mix']).default('process').describe('Process (PRM), outcome broadcast (Flow-GRPO), or their mix.'),
        steps: z.number().int().positive().default(20),
        groupSize: z.number().int().min(2).default(8).describe('Rollouts per prompt (G).'),
        promptsPerStep: z.number().int().positive().default(4),
        learningRate: z
          .number()
          .positive()
          .default(3e-4)
          .describe('DAPO learning rate (measured on the default: 1e-3 collapses within 15 steps under PRM credit, 1e-4 does not move).'),
        warmupSteps: z.number().int().nonnegative().default(0).describe('Linear learning-rate warm-up in DAPO steps (DAPO uses 20 of thousands; a short run starts at the peak).'),
        evalEvery: z.number().int().positive().default(5),
        dynamicSampling: z
          .enum(['refill', 'drop', 'off'])
          .default('refill')
          .describe('Groups whose rewards are all equal: refill the batch (DAPO 3.2), drop them, or keep them (GRPO).'),
        maxRounds: z.number().int().positive().default(12).describe('Generation rounds per step before refill gives up.'),
      })
      .strict()
      .default({ credit: 'process', steps: 20, groupSize: 8, promptsPerStep: 4, learningRate: 3e-4, warmupSteps: 0, evalEvery: 5, dynamicSampling: 'refill', maxRounds: 12 }),
  })
  .strict();

export type RunConfig = z.infer<typeof runConfigSchema>;
