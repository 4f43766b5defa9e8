import { needsStepScores } from '@agentflow/dapo';
import { chatEndpointSchema, rolloutsSettingsSchema } from '@agentflow/llm';
import { loraShapeSchema, loraShapeSchemaWithDefaults, policyDtypeSchema, trainableSetSchema, warmStartCheckSchema } from '@agentflow/models';
import { crossTaskMemoryConfigSchema } from '@agentflow/flow';
import { promptTemplateConfigSchema } from '@agentflow/planner';
import { toolsConfigSchema } from '@agentflow/executor';
import { isPlainObject } from '@agentflow/core';
import { z } from 'zod';
import { taskSourceSettingsSchemaWith } from '@agentflow/eval';
import { prmTrainableConfigSchema, prmTrainableConflict } from './prm-trainable';
import { trainSchema } from './train-schema';
import { trackingSettingsSchema } from '@agentflow/tracking';

const modelSource = z
  .union([
    z.object({ preset: z.enum(['tiny']).describe("policy.model: the world's random planner, created by the warm-start stage; prm.backbone: the warm-started planner with its adapter merged.") }).strict(),
    z.object({ path: z.string().min(1).describe('A Hugging Face style folder: config.json, *.safetensors, tokenizer.json.') }).strict(),
  ])
  .describe('Where the model comes from: a preset created on the first run, or a local folder.');

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
    deviceMemoryGiB: z
      .number()
      .positive()
      .optional()
      .describe("Memory of the device for --dry-run's memory plan: default the machine's RAM on the CPU, 139 GiB (one H200) on CUDA."),
    task: taskSourceSettingsSchemaWith({ plannerRequest: '`policy.model: { preset: tiny }`', oversizedPlanner: 'a preset planner trains on the CPU; give policy.model.path for a larger model' }),
    policy: z
      .object({
        model: modelSource.default({ preset: 'tiny' }),
        lora: loraShapeSchemaWithDefaults({ rank: 16, alpha: 32, source: 'the embedded default' })
          .prefault({})
          .describe('The warm-start adapter with warmStart.trainable lora (the default for a folder model): LoRA on every linear module of the planner (PEFT "all-linear").'),
        temperature: z.number().positive().default(1).describe('Sampling temperature of rollouts and evaluation.'),
        maxNewTokens: z.number().int().positive().max(131_072).default(48).describe('Token limit of one planner decision (at most 131072, past any Qwen3 context).'),
        maxSteps: z
          .number()
          .int()
          .positive()
          .max(1_000)
          .default(8)
          .describe(
            "Planner decisions per task at most, the finish included; the run refuses a value below the longest demonstration's decision count. A task's own budget (task.stepSlack) can only lower it. Default 8: the embedded world's longest task (two lookups, each checked, python, finish) with its step slack of 2.",
          ),
        prompt: promptTemplateConfigSchema,
        chatTemplateKwargs: z
          .record(z.string(), z.unknown())
          .default({ enable_thinking: false })
          .describe(
            "Variables passed to the model folder's chat template (Hugging Face apply_chat_template kwargs). Default { enable_thinking: false }: Qwen3 with thinking off, as the AgentFlow reference system runs it. A template without the thinking switch (Qwen2.5's, Llama 3.1's) never thinks: false is dropped for it, true is refused when the folder loads.",
          ),
        rollouts: rolloutsSettingsSchema,
        generationRows: z
          .number()
          .int()
          .positive()
          .default(16)
          .describe('Rollouts the local planner samples together at most (one generation batch: its KV cache and prefill grow with it).'),
        dtype: policyDtypeSchema,
        recompute: z
          .boolean()
          .default(false)
          .describe(
            "Recompute each layer's activations in the backward pass of the planner's training step (and the PRM's): a fraction of the activation memory for about one more forward pass (--dry-run's memory plan shows both). Same gradients.",
          ),
        rowBlockSize: z
          .number()
          .int()
          .positive()
          .nullable()
          .default(null)
          .describe(
            "Run each layer's norms, projections and MLP in the planner's training step in blocks of this many rows, recomputed per block in the backward (for long rows: a 4,096-token step at the Qwen3-0.6B shape peaks 1.44x the 1,024-token one instead of about 1.75x; slower). Same gradients. null: off. --dry-run's memory plan does not count it yet.",
          ),
      })
      .strict()
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
        learningRate: z
          .number()
          .positive()
          .default(3e-3)
          .describe(
            "Peak learning rate, after a linear warm-up. Default 3e-3 with 50 warm-up updates: on the world's random planner trained in full, seeds 0-5 all passed the check at the first attempt (loss 0.035-0.037, 57-73% of the held-back tasks), where 1e-2 with 20 left seed 2 at loss 0.131 (10%) and seed 4 at 0.549 after epoch 3 (see the trainer README).",
          ),
        schedule: z
          .enum(['cosine', 'constant'])
          .default('cosine')
          .describe('After the warm-up: cosine down to a tenth of the peak by the last epoch, or constant (then a run of E epochs is the first E epochs of a longer one).'),
        warmupSteps: z.number().int().nonnegative().default(50).describe('Optimiser updates of linear warm-up to the peak.'),
        batchSize: z.number().int().positive().default(16).describe('Demonstration steps per optimiser update.'),
        microBatchRows: z
          .number()
          .int()
          .positive()
          .default(8)
          .describe(
            "Steps per forward and backward run at most: an update's steps are taken shortest first and cut into runs of this many, so each run pads to steps of about its own length (the same update; on the world's demonstrations 38% of a 16-step batch was padding). Set it to batchSize for one run per update.",
          ),
        check: warmStartCheckSchema,
        // Frozen patterns alone (`--set warmStart.trainable.frozen=[...]`) mean full training.
        trainable: z
          .preprocess((value) => (isPlainObject(value) && !('kind' in value) && 'frozen' in value ? { kind: 'full', ...value } : value), trainableSetSchema.optional())
          .describe(
            "What the warm start trains. Absent: every weight for the world's random planner (policy.model.preset tiny: LoRA cannot reach a random model's embeddings, norms or tied head), an adapter for a model loaded from a folder (policy.model.path). { kind: lora }: an adapter of policy.lora's shape on the planner, saved as a PEFT folder in checkpoints/policy-warm and merged into models/planner-warm for what follows; { kind: full, frozen?: [patterns] }: every weight of the planner but the frozen ones, saved as a Hugging Face folder in checkpoints/policy-warm, which is then the warm planner itself (nothing merged).",
          ),
      })
      .strict()
      .prefault({}),
    fixedModules: chatEndpointSchema
      .nullable()
      .default(null)
      .describe('Back end of the fixed verifier and generator; null uses rules and the finish input.'),
    tools: toolsConfigSchema,
    memory: crossTaskMemoryConfigSchema
      .prefault({}),
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
            endpoint: chatEndpointSchema.describe('The judge: any OpenAI-compatible endpoint (DeepSeek: responseFormat json_object), or Ollama.'),
            maxTrajectories: z.number().int().positive().default(480).describe('Collected trajectories to label at most.'),
            includeReference: z
              .boolean()
              .default(true)
              .describe("Give the judge the task's reference answer with each step (it never sees the scored step's own tool result)."),
            concurrency: z.number().int().positive().default(8).describe('Judge calls in flight at once.'),
            inputUsdPerMillion: z.number().nonnegative().optional().describe("USD per million prompt tokens, for the running cost (default DeepSeek's price)."),
            outputUsdPerMillion: z.number().nonnegative().optional().describe("USD per million completion tokens (default DeepSeek's price)."),
          })
          .strict(),
      ])
      .prefault({ kind: 'monte-carlo' }),
    prm: z
      .object({
        backbone: modelSource.default({ preset: 'tiny' }),
        lora: loraShapeSchema
          .nullable()
          .default(null)
          .describe(
            'LoRA on the PRM backbone, trained with the head; null (the default) trains the head alone on frozen features, in seconds. The earlier spelling of prm.trainable { kind: lora, rank, alpha }: not with prm.trainable.',
          ),
        trainable: prmTrainableConfigSchema,
        input: z
          .enum(['text', 'chat'])
          .default('chat')
          .describe("What the PRM reads: the step as the planner saw and wrote it ('chat', for the warm planner as backbone) or the plain-text rendering ('text')."),
        confidence: z
          .union([z.boolean(), z.enum(['log-probs', 'extended'])])
          .default('extended')
          .describe(
            "Also give the PRM's head the planner's confidence in the trajectory so far, from the log-probs each step was sampled with (@agentflow/prm confidenceFeatures): 'log-probs' (or true) the three log-prob features, 'extended' those as probabilities too, with the number of earlier decisions; false: none.",
          ),
        stepResult: z
          .boolean()
          .default(true)
          .describe(
            "Let the PRM read what each scored decision's tool returned (@agentflow/prm stepResult): with input 'chat' the planner's next prompt, which shows it; false: the decision alone. With a 64-unit head, on the labels of 23 runs: 55.5% below the constant's MSE on average, lowest 37.5%, where the decision alone with a linear head gave 50.1%, lowest 28.0% (the trainer README).",
          ),
        headHidden: z
          .number()
          .int()
          .nonnegative()
          .default(64)
          .describe(
            "Units of a ReLU layer in the PRM's head, between its standardised inputs (the backbone's last hidden state and the confidence features) and the score (@agentflow/prm headHidden); 0: a linear head.",
          ),
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
        backboneLearningRate: z
          .number()
          .positive()
          .default(1e-5)
          .describe(
            "Learning rate of the PRM backbone's own weights with prm.trainable.kind full (the head keeps prm.learningRate): @agentflow/prm's default, 1e-5, for a pretrained backbone; not measured on the world's tiny planner, where a random tiny backbone took 1e-3.",
          ),
        scoringBatchSize: z.number().int().positive().default(16).describe('Steps the PRM scores in one backbone run during DAPO (its activations grow with it).'),
        epochs: z.number().int().positive().default(80).describe('PRM training epochs at most (the default run: its best at epoch 23, stopped at 35).'),
        patience: z.number().int().positive().default(12).describe('Epochs without a better validation loss before the PRM stops (best parameters kept).'),
        validationFraction: z.number().min(0.05).max(0.5).default(0.25),
        refreshAt: z
          .array(z.number().int().positive())
          .default([])
          .describe(
            "DAPO steps after which the PRM is made again on the policy of that step: the collect stage's tasks run with it, its steps labelled as label configures (Monte-Carlo completions with that policy), a new PRM trained on those labels; the steps after use it. Empty (the default): the train-prm stage's PRM scores every step. Needs a credit that uses the PRM.",
          ),
      })
      .strict()
      .prefault({}),
    train: trainSchema.describe("DAPO on the planner: @agentflow/dapo's whole configuration, laid over the embedded default's values."),
    tracking: trackingSettingsSchema.optional(),
  })
  .strict()
  .superRefine((config, context) => {
    if (config.prm.refreshAt.length > 0 && !needsStepScores(config.train.credit)) {
      context.addIssue({
        code: 'custom',
        path: ['prm', 'refreshAt'],
        message: `prm.refreshAt [${config.prm.refreshAt.join(', ')}] refreshes the PRM, but train.credit kind ${config.train.credit.kind} uses none; remove prm.refreshAt or use a process credit (process-sum, process-min)`,
      });
    }
    const prmConflict = prmTrainableConflict(config.prm);
    if (prmConflict) context.addIssue({ code: 'custom', path: ['prm', 'trainable'], message: prmConflict });
    // vLLM servers load each step's LoRA adapter; a planner trained in full has none to send.
    if (config.train.trainable.kind === 'full' && config.policy.rollouts.kind === 'vllm') {
      context.addIssue({
        code: 'custom',
        path: ['train', 'trainable'],
        message: 'train.trainable full cannot roll out on policy.rollouts.kind vllm: vLLM servers receive LoRA adapters, not whole weights; train LoRA (train.trainable.kind: lora) or roll out locally (policy.rollouts.kind: local)',
      });
    }
    if ((config.warmStart.trainable ?? defaultWarmStartTrainable(config.policy.model)).kind === 'full' && config.train.trainable.kind === 'lora' && config.train.lora === null) {
      context.addIssue({
        code: 'custom',
        path: ['train', 'lora'],
        message: 'train.lora null trains the warm-start adapter on, but warmStart.trainable full leaves no adapter; give train.lora a shape (a fresh adapter on the warm planner) or set train.trainable.kind: full',
      });
    }
    // A preset planner is the world's: its tokenizer is learned from the world's demonstrations.
    if ('preset' in config.policy.model && config.task.kind !== 'world') {
      context.addIssue({
        code: 'custom',
        path: ['policy', 'model'],
        message: `a preset planner is made for task.kind world (its tokenizer is learned from the world's demonstrations); with task.kind ${config.task.kind} give policy.model.path, a Hugging Face folder`,
      });
    }
  })
  .transform((config) => ({ ...config, warmStart: { ...config.warmStart, trainable: config.warmStart.trainable ?? defaultWarmStartTrainable(config.policy.model) } }));

/**
 * What the warm start trains when the config does not say: the world's random planner in full
 * (LoRA cannot reach a random model's embeddings, norms or tied head), a pretrained folder through an adapter.
 */
function defaultWarmStartTrainable(model: z.infer<typeof modelSource>): z.output<typeof trainableSetSchema> {
  return 'preset' in model ? { kind: 'full', frozen: [] } : { kind: 'lora' };
}

export type RunConfig = z.infer<typeof runConfigSchema>;
