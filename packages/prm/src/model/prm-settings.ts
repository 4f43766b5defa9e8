import { loraSettingsSchema } from '@agentflow/models';
import { z } from 'zod';

/**
 * What trains with the head: nothing else (`head`, the backbone frozen), a LoRA adapter on the
 * backbone (`lora`), or the backbone's own weights (`full`, except the `frozen` ones).
 */
export const prmTrainableSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('head').describe('The head alone, on features of the frozen backbone computed once (seconds).'),
    }),
    z.strictObject({
      kind: z.literal('lora').describe('A LoRA adapter on the backbone, trained with the head through one training graph.'),
      ...loraSettingsSchema.shape,
    }),
    z.strictObject({
      kind: z.literal('full').describe("Every weight of the backbone the PRM reads, trained with the head (an untied LM head is not read, so it stays as it is)."),
      frozen: z
        .array(z.string().min(1))
        .default([])
        .describe(
          'Backbone weights kept frozen, as Hugging Face names where `*` stands for any run of characters, dots included (e.g. "model.embed_tokens.weight", "model.layers.*.input_layernorm.weight"); each pattern must match a weight. Default none.',
        ),
    }),
  ])
  .describe('What trains with the head: { kind: "head" } (default), { kind: "lora", rank, alpha, ... } or { kind: "full", frozen?: [patterns] }.');
export type PrmTrainableSettings = z.input<typeof prmTrainableSchema>;
export type PrmTrainable = z.output<typeof prmTrainableSchema>;

/**
 * What trains with the head when `trainable` may be absent and `lora`, its earlier spelling, may
 * be given: `trainable` as it is, else `{ kind: 'lora', ...lora }` when `lora` is set, else the
 * head alone. (Giving both is refused by {@link prmSettingsSchema}, not here.)
 */
export function resolvePrmTrainable<Lora extends { rank: number; alpha: number }>(settings: {
  lora?: Lora | null | undefined;
  trainable?: PrmTrainable | undefined;
}): PrmTrainable | ({ kind: 'lora' } & Lora) {
  if (settings.trainable !== undefined) return settings.trainable;
  return settings.lora ? { kind: 'lora', ...settings.lora } : { kind: 'head' };
}

/** The longest input the PRM reads by default, in tokens (`maxTokens`): a longer one keeps its end. */
export const DEFAULT_PRM_MAX_TOKENS = 512;

/**
 * Tokens of the longest PRM input, for a memory plan: with `input: 'chat'` the planner's prompt
 * and completion, with `'text'` the step's completion and about 512 tokens of question and
 * earlier decisions; either way cut to `maxTokens`, as the PRM cuts its inputs.
 */
export function prmInputTokenEstimate(settings: { input: 'text' | 'chat'; maxTokens?: number }, planner: { promptTokens: number; completionTokens: number }): number {
  const full = settings.input === 'chat' ? planner.promptTokens + planner.completionTokens : planner.completionTokens + 512;
  return Math.min(full, settings.maxTokens ?? DEFAULT_PRM_MAX_TOKENS);
}

/** Where the PRM's backbone comes from. */
export const prmBackboneSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('random'),
      preset: z
        .enum(['tiny', 'qwen3-0.6b-shape'])
        .default('tiny')
        .describe('A built-in Qwen3 shape (@agentflow/models presets); tiny pairs with the byte-level tokenizer.'),
      seed: z.number().int().default(0).describe('Seed of the random weights; the checkpoint stores it to rebuild them.'),
    })
    .strict(),
  z
    .object({
      kind: z.literal('folder'),
      path: z.string().min(1).describe('A Hugging Face Qwen3 folder: config.json, *.safetensors, tokenizer files.'),
      chatTemplateKwargs: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          "Variables for the folder's chat template when input is 'chat' (as the planner rendered its prompts, e.g. Qwen3's { enable_thinking: false }); default none.",
        ),
    })
    .strict(),
]);
export type PrmBackbone = z.infer<typeof prmBackboneSchema>;

/** What `createPrm` builds. */
const prmSettingsObject = z
  .object({
    backbone: prmBackboneSchema
      .default({ kind: 'random', preset: 'tiny', seed: 0 })
      .describe('The Qwen3 backbone: the tiny preset by default (the reference system uses Qwen3-0.6B).'),
    trainable: prmTrainableSchema
      .optional()
      .describe('What trains with the head: the head alone (default), LoRA on the backbone, or the backbone in full.'),
    lora: loraSettingsSchema
      .optional()
      .describe('The earlier spelling of trainable: { kind: "lora", ...lora }; give one of the two, not both.'),
    input: z
      .enum(['text', 'chat'])
      .default('text')
      .describe(
        "What the backbone reads: 'text' renders question, earlier decisions with their results and the decision as plain text (any backbone); 'chat' reads the step as the planner saw and wrote it, its prompt through the backbone's chat template and then its completion (for a backbone that is the planner, whose features are keyed to that format; needs a folder backbone and steps with prompt and completion). Default 'text'.",
      ),
    stepResult: z
      .boolean()
      .default(false)
      .describe(
        "Also read what the scored decision's tool returned. With input 'chat' the backbone reads the planner's next prompt (its history now ending with this decision and its result) in place of this step's prompt and completion, when the trajectory goes on (the last decision is read as without); with 'text' the result follows the decision. A Monte-Carlo label is the chance of success from after the decision's result, so with deterministic tools the result adds nothing the label does not already depend on: a lookup that returned a stale value is plain to read there, and hard to infer from the query (the trainer README). Needs steps with result (and, for 'chat', nextPrompt). Default false: the PRM judges the decision alone.",
      ),
    confidence: z
      .union([z.boolean(), z.enum(['log-probs', 'extended'])])
      .default(false)
      .describe(
        "Also feed the head the planner's confidence in the trajectory so far, from the sampling log-probs recorded with each step. 'log-probs' (or true): the decision's log-likelihood, its least likely token, and the least likely token of any decision up to it; 'extended': those three, each also as a probability, the product of each decision's least likely token probability, and the number of earlier decisions (see confidenceFeatures). A wrong decision the planner sampled against its own judgement shows there, however hard it is to see in the text. Needs steps with completionLogprobs and historyLogprobs. Default false.",
      ),
    headHidden: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe(
        "Units of a ReLU layer between the head's inputs and its score (a PyTorch Sequential(Linear(inputs, headHidden), ReLU, Linear(headHidden, 1))); 0 scores with one linear layer, the Hugging Face *ForSequenceClassification head. A frozen backbone's last hidden state need not be linear in a step's chance of success: on the Monte-Carlo labels of 23 runs of the default, 64 units fit the held-out labels better than a linear head in every one (the trainer README). Default 0.",
      ),
    maxTokens: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_PRM_MAX_TOKENS)
      .describe('Longest input in tokens; longer ones keep their end (the decision) and lose their start.'),
    batchSize: z.number().int().positive().default(16).describe('Inputs per backbone run when scoring.'),
    device: z.enum(['auto', 'cuda', 'cpu']).default('auto').describe('ONNX Runtime execution provider.'),
    intraOpThreads: z.number().int().positive().optional().describe('ONNX Runtime threads per operator (default: its own).'),
  })
  .strict();

/**
 * What `createPrm` builds. `lora` (the earlier spelling) becomes `trainable: { kind: 'lora', ... }`,
 * so a parsed config names what trains in `trainable` alone; both at once are refused.
 */
export const prmSettingsSchema = prmSettingsObject
  .superRefine((settings, context) => {
    if (settings.lora !== undefined && settings.trainable !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['lora'],
        message: `lora is the earlier spelling of trainable: { kind: 'lora', ... }, but trainable is also given (kind ${settings.trainable.kind}); give one of the two`,
      });
    }
  })
  .transform(({ lora, trainable, ...rest }) => ({ ...rest, trainable: resolvePrmTrainable({ lora, trainable }) }));
export type PrmSettings = z.input<typeof prmSettingsSchema>;
export type PrmConfig = z.output<typeof prmSettingsSchema>;
