import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
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
import { clippedSurrogate } from '../../math/clipped-surrogate';

/**
 * A real, tiny TrainablePolicy for loop tests: for each prompt (its first token id) a
 * softmax over `actions` tokens, trained by Adam with exact gradients in plain TypeScript.
 * The clipped-surrogate gradient with respect to each token's log-prob is chained through
 * d log pi(a) / d theta_k = [k = a] - pi_k.
 */
export interface TwoActionPolicy extends TrainablePolicy {
  /** pi(action | prompt). */
  probability(prompt: number, action: number): number;
  parameters(): number[][];
}

export function createTwoActionPolicy(settings: { prompts: number; actions?: number; initialLogits?: number[][] }): TwoActionPolicy {
  const actions = settings.actions ?? 2;
  let theta = settings.initialLogits?.map((row) => [...row]) ?? Array.from({ length: settings.prompts }, () => new Array(actions).fill(0));
  let firstMoment = theta.map((row) => row.map(() => 0));
  let secondMoment = theta.map((row) => row.map(() => 0));
  let updates = 0;
  let gradient = theta.map((row) => row.map(() => 0));

  const distribution = (prompt: number): number[] => {
    const logits = theta[prompt];
    if (logits === undefined) throw new Error(`unknown prompt ${prompt}`);
    const top = Math.max(...logits);
    const exps = logits.map((logit) => Math.exp(logit - top));
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
    parameters: () => theta.map((row) => [...row]),
    async generate(requests: PolicyGenerateRequest[]): Promise<PolicyGeneration[]> {
      return requests.map((request) => {
        const random = createRandom(request.seed ?? 0);
        const pi = distribution(request.promptIds[0] as number);
        let draw = random.next();
        let token = pi.length - 1;
        for (let action = 0; action < pi.length; action++) {
          draw -= pi[action] as number;
          if (draw < 0) {
            token = action;
            break;
          }
        }
        return { tokenIds: [token], text: String.fromCharCode(65 + token), logprobs: [Math.log(pi[token] as number)], finishReason: 'stop' };
      });
    },
    async logprobs(batch) {
      return logprobsOf(batch);
    },
    async accumulateGradients(batch: PolicyTrainingBatch): Promise<PolicyTrainingStats> {
      if (batch.objective.kind !== 'clipped-surrogate') throw new Error('only the clipped surrogate is supported');
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
        completion.forEach((token, position) => {
          const upstream = result.gradient[flat] as number;
          if ((batch.tokenWeights[row]?.[position] ?? 0) !== 0) entropySum += entropy;
          const grad = gradient[prompt] as number[];
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
      const beta1 = 0.9;
      const beta2 = 0.999;
      theta = theta.map((row, prompt) =>
        row.map((value, action) => {
          const g = (gradient[prompt]?.[action] as number) * scale;
          const m = beta1 * (firstMoment[prompt]?.[action] as number) + (1 - beta1) * g;
          const v = beta2 * (secondMoment[prompt]?.[action] as number) + (1 - beta2) * g * g;
          (firstMoment[prompt] as number[])[action] = m;
          (secondMoment[prompt] as number[])[action] = v;
          const mHat = m / (1 - beta1 ** updates);
          const vHat = v / (1 - beta2 ** updates);
          return value - (optimizer.learningRate * mHat) / (Math.sqrt(vHat) + 1e-8);
        }),
      );
      gradient = theta.map((row) => row.map(() => 0));
      return { gradNorm: norm };
    },
    async save(dir) {
      writeFileAtomic(join(dir, 'two-action-policy.json'), JSON.stringify({ theta, firstMoment, secondMoment, updates }));
    },
    async load(dir) {
      const state = JSON.parse(readFileSync(join(dir, 'two-action-policy.json'), 'utf8'));
      theta = state.theta;
      firstMoment = state.firstMoment;
      secondMoment = state.secondMoment;
      updates = state.updates;
      gradient = theta.map((row) => row.map(() => 0));
    },
  };
}
