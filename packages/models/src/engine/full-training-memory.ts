import { AgentFlowError, describeValue } from '@agentflow/core';
import type { MemoryPlanRow, PlannedModel } from './memory-plan';
import { parameterCount } from './parameter-count';
import { type PlannedSession, sessionActivations } from './session-activations';

/**
 * The memory plan's terms for a model trained in full (every weight, PlannedModel.fullTraining):
 * its checks, the weight-sized buffers of its step and its frozen reference. memory-plan.ts adds
 * them to the plan.
 */

/**
 * Where a model trained in full finds its frozen reference (the starting weights, which DAPO's KL
 * term scores against):
 * - 'copy': a float32 copy of the starting weights, kept beside the trained ones;
 * - 'none': no reference (no KL term);
 * - `{ sharedWith }`: the weights of another planned model loaded from the same checkpoint and
 *   never changed (e.g. the PRM's backbone when the PRM trains a head or an adapter): counted once, there.
 */
export type PlannedReference = 'copy' | 'none' | { sharedWith: string };

/** Full-parameter training of a planned model: every weight is trained with AdamW. */
export interface PlannedFullTraining {
  reference: PlannedReference;
}

const FLOAT32 = 4;
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

function invalid(message: string, details: Record<string, unknown>): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `planMemory: ${message}`, details });
}

/** A model trains an adapter or every weight, not both; a shared reference is another model's unchanged weights of the same shape. */
export function checkFullTraining(models: readonly PlannedModel[]): void {
  for (const model of models) {
    if (!model.fullTraining) continue;
    if ((model.weightDtype ?? 'float32') !== 'float32') {
      throw invalid(`${model.name} trains every weight in ${model.weightDtype}; full-parameter training keeps float32 master weights (weightDtype float32).`, { model: model.name, weightDtype: model.weightDtype });
    }
    if (model.loraRank && model.loraRank > 0) {
      throw invalid(`${model.name} trains every weight and a LoRA adapter of rank ${model.loraRank}; plan one of the two (loraRank 0 with fullTraining).`, { model: model.name });
    }
    const { reference } = model.fullTraining;
    if (typeof reference !== 'object') continue;
    const names = models.map((other) => other.name);
    const owner = models.find((other) => other.name === reference.sharedWith && other !== model);
    if (!owner) {
      throw invalid(`${model.name}'s reference is shared with ${describeValue(reference.sharedWith)}, which is not another planned model (${names.join(', ')}).`, { model: model.name, sharedWith: reference.sharedWith });
    }
    if (owner.fullTraining) {
      throw invalid(`${model.name}'s reference is shared with ${owner.name}, which trains every weight, so its weights do not stay the starting ones; use reference 'copy'.`, { model: model.name, sharedWith: owner.name });
    }
    if (parameterCount(owner.config) !== parameterCount(model.config) || owner.config.hiddenSize !== model.config.hiddenSize) {
      throw invalid(`${model.name}'s reference is shared with ${owner.name}, a model of another shape (${parameterCount(owner.config)} parameters, not ${parameterCount(model.config)}); only the same checkpoint can be shared.`, {
        model: model.name,
        sharedWith: owner.name,
      });
    }
  }
}

/**
 * Weight-sized buffers of a step that trains every weight, besides the weights: the gradient
 * accumulator, AdamW's two moments, and the training session's own copy of the gradients. The
 * session returns every gradient as an output, which ONNX Runtime's binding copies into
 * JavaScript arrays (they become the accumulator) while its own outputs are still allocated (and
 * its arena keeps them after the run). Measured at the Qwen3-0.6B shape on the CPU
 * (bench/memory-bench.mjs --training full, docs/perf.md): the first training step added 2.64 x
 * the weights, AdamW's first update 2.00 x.
 */
const FULL_TRAINING_WEIGHT_COPIES = 4;
/**
 * Embedding-sized float32 buffers the step holds beside the embedding's gradient (an output, so
 * counted above): the lookup's part, a scatter onto zeros, and with a tied head the head's part,
 * before the two are summed; untied, the zeros alone. Measured at the 0.6B shape (tied): the first
 * step added 1.02 x vocab x hidden beyond its two gradient copies and the plan's activations, and
 * each later step 1.00 x more for a moment (its peak over the resident size before it).
 */
const embeddingCopies = (tied: boolean) => (tied ? 2 : 1);

/**
 * Full training's rows: the gradient accumulator, AdamW's moments and the session's gradient
 * outputs (and on CUDA the host copy of the weights), the step's embedding-sized buffer, and the
 * frozen reference.
 */
export function fullTrainingRows(model: PlannedModel, full: PlannedFullTraining, weightBytes: number, device: 'cpu' | 'cuda'): MemoryPlanRow[] {
  const cuda = device === 'cuda';
  const copies = FULL_TRAINING_WEIGHT_COPIES + (cuda ? 1 : 0);
  const embedding = embeddingCopies(model.config.tieWordEmbeddings) * model.config.vocabSize * model.config.hiddenSize * FLOAT32;
  const rows: MemoryPlanRow[] = [
    {
      model: model.name,
      part: 'full training',
      bytes: weightBytes * copies + embedding,
      detail: `${cuda ? 'host memory: the float32 weights AdamW updates, fed to the sessions each run, ' : ''}one float32 gradient accumulator, AdamW's two float32 moments and the training session's own copy of the gradients (its outputs, which ONNX Runtime holds while they are copied out) (${copies} x ${gib(weightBytes)}), and the step's embedding-sized buffers (${gib(embedding)})`,
    },
  ];
  const { reference } = full;
  if (reference === 'copy') {
    rows.push({
      model: model.name,
      part: 'reference',
      bytes: weightBytes,
      detail: `a frozen float32 copy of the starting weights for the KL term${cuda ? ', in host memory, fed to the inference session when the reference is scored' : ''}`,
    });
  } else if (reference !== 'none') {
    rows.push({ model: model.name, part: 'reference', bytes: 0, detail: `the starting weights, shared with ${reference.sharedWith}'s (counted there)` });
  }
  return rows;
}

/**
 * A reference copied for full training scores through an inference session of its own (over the
 * copy), with an arena of its own: the activations of the largest log-prob scoring the model's
 * inference sessions plan (those that score completions), counted again. None otherwise.
 */
export function referenceScoring(model: PlannedModel): MemoryPlanRow | undefined {
  if (model.fullTraining?.reference !== 'copy') return undefined;
  const scored = model.sessions.filter((session) => session.kind === 'inference' && session.scored > 0);
  const largest = scored
    .map((session) => ({ session, ...sessionActivations(model.config, session) }))
    .reduce<{ session: PlannedSession; bytes: number; detail: string } | undefined>((best, entry) => (best === undefined || entry.bytes > best.bytes ? entry : best), undefined);
  if (!largest) return undefined;
  return {
    model: model.name,
    part: 'reference scoring (activations)',
    bytes: largest.bytes,
    detail: `the reference copy's own inference session, scoring as ${largest.session.name} does: ${largest.detail}`,
  };
}
