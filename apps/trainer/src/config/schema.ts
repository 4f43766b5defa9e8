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
    seed: z
      .number()
      .int()
      .default(0)
      .describe(
        "Seed of every random choice in the run. A warm start on the imperfect teacher's 800 demonstrations formed its copy circuits or not depending on the seed and the exact demonstrations (see the trainer README).",
      ),
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
      .prefault({ kind: 'world' })
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
          .prefault({})
          .describe('Shape of the random planner created for the embedded default (preset: tiny).'),
        lora: z
          .object({
            rank: z.number().int().positive().default(128),
            alpha: z.number().positive().default(256),
          })
          .strict()
          .prefault({})
          .describe('LoRA on every linear module of the planner (PEFT "all-linear"); rank = hidden is full rank.'),
        temperature: z.number().positive().default(1).describe('Sampling temperature of rollouts and evaluation.'),
        maxNewTokens: z.number().int().positive().default(48).describe('Token limit of one planner decision.'),
        maxSteps: z.number().int().positive().default(5).describe('Planner decisions per task at most.'),
      })
      .strict()
      .refine((policy) => policy.shape.hiddenSize % policy.shape.heads === 0, {
        message: 'policy.shape.hiddenSize must be a multiple of policy.shape.heads',
      })
      .prefault({}),
    warmStart: z
      .object({
        epochs: z.number().int().nonnegative().default(8).describe('Passes over the expert demonstrations (0 skips the warm start).'),
        demonstrations: z
          .number()
          .int()
          .positive()
          .nullable()
          .default(null)
          .describe('Learn from the demonstrations of the first N training tasks only (null: all); DAPO draws from every training task.'),
        expertErrorRate: z
          .number()
          .min(0)
          .max(1)
          .default(0.4)
          .describe(
            "Fraction of the demonstrations that carry one of the expert's mistakes (expertMistakes) and answer what it leads to: an imperfect teacher, as real SFT data is. 0: the world's exact expert.",
          ),
        expertMistakes: z
          .array(z.enum(['operator', 'lookup']))
          .min(1)
          .default(['lookup'])
          .describe("The mistakes of the imperfect expert, one drawn per flawed demonstration: 'operator' (another operator in the code), 'lookup' (another counted thing looked up, and used)."),
        learningRate: z.number().positive().default(1e-2).describe('Peak learning rate, after a linear warm-up.'),
        schedule: z
          .enum(['cosine', 'constant'])
          .default('cosine')
          .describe('After the warm-up: cosine down to a tenth of the peak by the last epoch, or constant (then a run of E epochs is the first E epochs of a longer one).'),
        warmupSteps: z.number().int().nonnegative().default(20),
        batchSize: z.number().int().positive().default(16),
      })
      .strict()
      .prefault({}),
    fixedModules: chatEndpoint
      .nullable()
      .default(null)
      .describe('Back end of the fixed verifier and generator; null uses rules and the finish input.'),
    collect: z
      .object({
        rolloutsPerTask: z.number().int().positive().default(1).describe('Trajectories kept per training task.'),
        maxTasks: z.number().int().positive().default(480).describe('Training tasks the collect stage runs at most.'),
      })
      .strict()
      .prefault({}),
    label: z
      .discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('monte-carlo'),
            samples: z.number().int().positive().default(4).describe('Completions per step (Math-Shepherd uses 8).'),
            maxTrajectories: z.number().int().positive().default(480).describe('Collected trajectories to label at most.'),
          })
          .strict(),
        z
          .object({
            kind: z.literal('judge'),
            endpoint: chatEndpoint,
          })
          .strict(),
      ])
      .prefault({ kind: 'monte-carlo' }),
    prm: z
      .object({
        backbone: modelSource.default({ preset: 'tiny' }),
        lora: z
          .object({ rank: z.number().int().positive(), alpha: z.number().positive() })
          .strict()
          .nullable()
          .default(null)
          .describe('LoRA on the PRM backbone, trained with the head; null (the default) trains the head alone on frozen features, in seconds.'),
        input: z
          .enum(['text', 'chat'])
          .default('chat')
          .describe("What the PRM reads: the step as the planner saw and wrote it ('chat', for the warm planner as backbone) or the plain-text rendering ('text')."),
        confidence: z
          .boolean()
          .default(true)
          .describe("Also give the PRM's head the planner's confidence in the trajectory so far, from the log-probs each step was sampled with (@agentflow/prm confidenceFeatures)."),
        loss: z
          .enum(['mse', 'bce'])
          .default('bce')
          .describe('Training loss of the PRM on the soft labels: binary cross-entropy or MSE (the reference system). A head on the warm planner with confidence features, on 480 trajectories with both mistake kinds: held-out MSE 0.331 of the constant predictor with BCE, 0.352 with MSE.'),
        learningRate: z
          .number()
          .positive()
          .default(1e-2)
          .describe(
            "Learning rate of the PRM head: 1e-2 (the PRM package's default; a head alone with confidence features: the same held-out MSE at 3e-2). With LoRA on input 'chat' use 1e-3: the planner's last hidden state has a norm near sqrt(hidden), and at 1e-2 one Adam step moved the head's logit by about 1 while the adapter trained (validation loss swung from 0.14 to 0.30).",
          ),
        loraLearningRate: z.number().positive().default(1e-3).describe('Learning rate of the PRM LoRA matrices.'),
        epochs: z.number().int().positive().default(80).describe('PRM training epochs at most (the default run: its best at epoch 23, stopped at 35).'),
        patience: z.number().int().positive().default(12).describe('Epochs without a better validation loss before the PRM stops (best parameters kept).'),
        validationFraction: z.number().min(0.05).max(0.5).default(0.25),
      })
      .strict()
      .prefault({}),
    train: z
      .object({
        credit: z
          .enum(['process', 'outcome', 'mix'])
          .default('process')
          .describe('Process (PRM step scores alone), outcome broadcast (Flow-GRPO), or their sum A_outcome + A_process (a PRM that misses an error does not cancel the outcome).'),
        processCredit: z
          .enum(['sum', 'min'])
          .default('sum')
          .describe("How the PRM's step scores become credit: 'sum' (DeepSeekMath: normalised over the group, summed from each step on) or 'min' (PURE: a soft minimum over the trajectory's steps, T = 0.1, then return-to-go)."),
        steps: z.number().int().positive().default(30),
        groupSize: z.number().int().min(2).default(8).describe('Rollouts per prompt (G).'),
        promptsPerStep: z.number().int().positive().default(8),
        promptsPerUpdate: z
          .number()
          .int()
          .positive()
          .nullable()
          .default(null)
          .describe('Groups per optimiser update: a step makes promptsPerStep / promptsPerUpdate updates (PPO mini-batches); null: one update per step.'),
        lora: z
          .object({ rank: z.number().int().positive(), alpha: z.number().positive() })
          .strict()
          .nullable()
          .default({ rank: 16, alpha: 32 })
          .describe(
            'A fresh LoRA for DAPO on the warm-started planner with its adapter merged (B = 0: step 1 starts at the warm policy, with Adam moments of its own); null: DAPO goes on training the warm-start adapter and its Adam moments, whose memory of the warm start\'s large gradients shrinks every RL step (at lr 3e-4 it barely moved, at 1e-3 it collapsed).',
          ),
        klCoefficient: z
          .number()
          .nonnegative()
          .default(0.05)
          .describe(
            'Weight of the k3 KL term to the warm-started planner (frozen; bounded as verl does); 0 turns it off, as DAPO does. With the default it stayed under 0.05 nats per token over 30 steps at lr 5e-3 (seeds 0 and 1).',
          ),
        learningRate: z
          .number()
          .positive()
          .default(5e-3)
          .describe(
            'DAPO learning rate. On a fresh rank-16 adapter (the default), 8 prompts per step, KL 0.05: 5e-3 for 30 steps lifted held-out accuracy 20 points with seed 0 and 28 with seed 1, stable; 1e-2 for 20 steps lifted seed 0 by 17-22 but collapsed with seed 1 after 12 steps (67% -> 3%), with or without the KL term, and with PURE min-form credit too. On the warm adapter (train.lora null): 1e-3 collapsed within 15 steps, 1e-4 did not move.',
          ),
        warmupSteps: z.number().int().nonnegative().default(0).describe('Linear learning-rate warm-up in DAPO steps (DAPO uses 20 of thousands; a short run starts at the peak).'),
        evalEvery: z.number().int().positive().default(5),
        dynamicSampling: z
          .enum(['refill', 'drop', 'off'])
          .default('refill')
          .describe('Groups whose rewards are all equal: refill the batch (DAPO 3.2), drop them, or keep them (GRPO).'),
        maxRounds: z.number().int().positive().default(12).describe('Generation rounds per step before refill gives up.'),
      })
      .strict()
      .refine((train) => train.promptsPerUpdate === null || train.promptsPerUpdate <= train.promptsPerStep, {
        message: 'promptsPerUpdate must be at most promptsPerStep (a step cannot update on more groups than it samples)',
        path: ['promptsPerUpdate'],
      })
      .prefault({}),
  })
  .strict();

export type RunConfig = z.infer<typeof runConfigSchema>;
