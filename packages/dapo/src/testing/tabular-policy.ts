import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AgentFlowError,
  type OptimizerStepSettings,
  type PolicyBatch,
  type PolicyGenerateRequest,
  type PolicyGeneration,
  type PolicyTrainingBatch,
  type PolicyTrainingStats,
  type TrainablePolicy,
  createRandom,
  writeFileAtomic,
} from '@agentflow/core';
import { clippedSurrogate } from '../math/clipped-surrogate';

/** Settings for {@link createTabularPolicy}. */
export interface TabularPolicySettings {
  /** How many prompts; a prompt is named by its first token id, 0 to prompts - 1. */
  prompts: number;
  /** Tokens to choose from, each a whole completion. Default 2. */
  actions?: number;
  /** Starting logits, [prompts][actions]. Default all 0: every action equally likely. */
  initialLogits?: number[][];
  /** The text of a generated token. Default `String(token)`. */
  tokenText?: (token: number) => string;
}

/** A {@link TrainablePolicy} whose parameters are one row of logits per prompt. */
export interface TabularPolicy extends TrainablePolicy {
  /** pi(action | prompt). */
  probability(prompt: number, action: number): number;
  /** A copy of the logits, [prompts][actions]. */
  parameters(): number[][];
}

const BETA1 = 0.9; // Adam (Kingma & Ba 2015)
const BETA2 = 0.999; // Adam (Kingma & Ba 2015)
const EPSILON = 1e-8; // Adam (Kingma & Ba 2015)
const STATE_FILE = 'tabular-policy.json';

/**
 * A real, tiny TrainablePolicy in plain TypeScript, for tests and examples of the DAPO loop
 * that need no model: for each prompt a softmax over `actions` tokens, trained with Adam.
 * `clippedSurrogate` gives the exact gradient with respect to each token's log-prob;
 * d log pi(a) / d logit_k = [k = a] - pi_k chains it onto the logits. Sampling is seeded by
 * each request's `seed`, so runs repeat exactly; save and load keep the logits and Adam's moments.
 */
export function createTabularPolicy(settings: TabularPolicySettings): TabularPolicy {
  const actions = settings.actions ?? 2;
  const tokenText = settings.tokenText ?? ((token: number) => String(token));
  let logits = settings.initialLogits?.map((row) => [...row]) ?? Array.from({ length: settings.prompts }, () => new Array<number>(actions).fill(0));
  let firstMoment = logits.map((row) => row.map(() => 0));
  let secondMoment = logits.map((row) => row.map(() => 0));
  let updates = 0;
  let gradient = logits.map((row) => row.map(() => 0));

  const distribution = (prompt: number): number[] => {
    const row = logits[prompt];
    if (row === undefined) {
      throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `The tabular policy has prompts 0 to ${logits.length - 1}; got prompt ${prompt}.` });
    }
    const top = Math.max(...row);
    const exps = row.map((logit) => Math.exp(logit - top));
    const total = exps.reduce((sum, value) => sum + value, 0);
    return exps.map((value) => value / total);
  };
  const logprobsOf = (batch: PolicyBatch): number[][] =>
    batch.completionIds.map((completion, row) => {
      const pi = distribution(batch.promptIds[row]?.[0] as number);
      return completion.map((token) => Math.log(pi[token] as number));
    });

  return {
    probability: (prompt, action) => distribution(prompt)[action] as number,
    parameters: () => logits.map((row) => [...row]),
    async generate(requests: PolicyGenerateRequest[]): Promise<PolicyGeneration[]> {
      return requests.map((request) => {
        const pi = distribution(request.promptIds[0] as number);
        let draw = createRandom(request.seed ?? 0).next();
        let token = pi.length - 1;
        for (let action = 0; action < pi.length; action++) {
          draw -= pi[action] as number;
          if (draw < 0) {
            token = action;
            break;
          }
        }
        return { tokenIds: [token], text: tokenText(token), logprobs: [Math.log(pi[token] as number)], finishReason: 'stop' };
      });
    },
    async logprobs(batch) {
      return logprobsOf(batch);
    },
    async accumulateGradients(batch: PolicyTrainingBatch): Promise<PolicyTrainingStats> {
      if (batch.objective.kind !== 'clipped-surrogate') {
        throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `The tabular policy trains the clipped surrogate only, got objective ${batch.objective.kind}.` });
      }
      const newLogprobs = logprobsOf(batch);
      const result = clippedSurrogate(
        {
          newLogprobs: newLogprobs.flat(),
          oldLogprobs: (batch.oldLogprobs ?? newLogprobs).flat(),
          advantages: (batch.advantages ?? []).flat(),
          tokenWeights: batch.tokenWeights.flat(),
          referenceLogprobs: batch.referenceLogprobs?.flat(),
        },
        batch.objective,
      );
      let flat = 0;
      let entropySum = 0;
      batch.completionIds.forEach((completion, row) => {
        const prompt = batch.promptIds[row]?.[0] as number;
        const pi = distribution(prompt);
        const entropy = -pi.reduce((sum, p) => sum + (p > 0 ? p * Math.log(p) : 0), 0);
        const grad = gradient[prompt] as number[];
        completion.forEach((token, position) => {
          const upstream = result.gradient[flat] as number;
          if ((batch.tokenWeights[row]?.[position] ?? 0) !== 0) entropySum += entropy;
          for (let action = 0; action < pi.length; action++) grad[action] = (grad[action] as number) + upstream * ((action === token ? 1 : 0) - (pi[action] as number));
          flat += 1;
        });
      });
      return {
        loss: result.loss,
        tokens: result.tokens,
        clipFraction: result.clipFraction,
        approxKl: result.approxKl,
        entropy: result.tokens === 0 ? 0 : entropySum / result.tokens,
      };
    },
    async applyGradients(optimizer: OptimizerStepSettings) {
      const norm = Math.sqrt(gradient.flat().reduce((sum, value) => sum + value * value, 0));
      const scale = optimizer.maxGradNorm !== undefined && norm > optimizer.maxGradNorm ? optimizer.maxGradNorm / norm : 1;
      updates += 1;
      logits = logits.map((row, prompt) =>
        row.map((value, action) => {
          const g = (gradient[prompt]?.[action] as number) * scale;
          const m = BETA1 * (firstMoment[prompt]?.[action] as number) + (1 - BETA1) * g;
          const v = BETA2 * (secondMoment[prompt]?.[action] as number) + (1 - BETA2) * g * g;
          (firstMoment[prompt] as number[])[action] = m;
          (secondMoment[prompt] as number[])[action] = v;
          const mHat = m / (1 - BETA1 ** updates);
          const vHat = v / (1 - BETA2 ** updates);
          return value - (optimizer.learningRate * mHat) / (Math.sqrt(vHat) + EPSILON);
        }),
      );
      gradient = logits.map((row) => row.map(() => 0));
      return { gradNorm: norm };
    },
    async save(dir) {
      writeFileAtomic(join(dir, STATE_FILE), JSON.stringify({ logits, firstMoment, secondMoment, updates }));
    },
    async load(dir) {
      const state = JSON.parse(await readFile(join(dir, STATE_FILE), 'utf8'));
      ({ logits, firstMoment, secondMoment, updates } = state);
      gradient = logits.map((row) => row.map(() => 0));
    },
  };
}
