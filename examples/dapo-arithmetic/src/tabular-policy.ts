import {
  type OptimizerStepSettings,
  type PolicyBatch,
  type PolicyGenerateRequest,
  type PolicyGeneration,
  type PolicyTrainingBatch,
  type PolicyTrainingStats,
  type TrainablePolicy,
  createRandom,
} from '@agentflow/core';
import { clippedSurrogate } from '@agentflow/dapo';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A policy in plain TypeScript: for each prompt (its first token id) a softmax over
 * `answers` tokens, trained with Adam. DAPO's clipped surrogate gives the gradient with
 * respect to each token's log-prob; d log pi(a) / d logit_k = [k = a] - pi_k chains it on.
 */
export interface TabularPolicy extends TrainablePolicy {
  /** pi(answer | prompt). */
  probability(prompt: number, answer: number): number;
}

export function createTabularPolicy(prompts: number, answers: number): TabularPolicy {
  let logits = Array.from({ length: prompts }, () => new Array<number>(answers).fill(0));
  let gradient = logits.map((row) => row.map(() => 0));
  let moment1 = logits.map((row) => row.map(() => 0));
  let moment2 = logits.map((row) => row.map(() => 0));
  let updates = 0;

  const distribution = (prompt: number): number[] => {
    const row = logits[prompt] ?? [];
    const top = Math.max(...row);
    const exps = row.map((logit) => Math.exp(logit - top));
    const total = exps.reduce((sum, value) => sum + value, 0);
    return exps.map((value) => value / total);
  };
  const logprobsOf = (batch: PolicyBatch): number[][] =>
    batch.completionIds.map((completion, row) => {
      const pi = distribution(batch.promptIds[row]?.[0] ?? 0);
      return completion.map((token) => Math.log(pi[token] ?? 0));
    });

  return {
    probability: (prompt, answer) => distribution(prompt)[answer] ?? 0,
    async generate(requests: PolicyGenerateRequest[]): Promise<PolicyGeneration[]> {
      return requests.map((request) => {
        const pi = distribution(request.promptIds[0] ?? 0);
        let draw = createRandom(request.seed ?? 0).next();
        let token = pi.length - 1;
        for (let answer = 0; answer < pi.length; answer++) {
          draw -= pi[answer] ?? 0;
          if (draw < 0) {
            token = answer;
            break;
          }
        }
        return { tokenIds: [token], text: String(token), logprobs: [Math.log(pi[token] ?? 0)], finishReason: 'stop' };
      });
    },
    async logprobs(batch) {
      return logprobsOf(batch);
    },
    async accumulateGradients(batch: PolicyTrainingBatch): Promise<PolicyTrainingStats> {
      if (batch.objective.kind !== 'clipped-surrogate') throw new Error(`unsupported objective ${batch.objective.kind}`);
      const newLogprobs = logprobsOf(batch);
      const result = clippedSurrogate(
        {
          newLogprobs: newLogprobs.flat(),
          oldLogprobs: (batch.oldLogprobs ?? newLogprobs).flat(),
          advantages: (batch.advantages ?? []).flat(),
          tokenWeights: batch.tokenWeights.flat(),
        },
        batch.objective,
      );
      let flat = 0;
      batch.completionIds.forEach((completion, row) => {
        const prompt = batch.promptIds[row]?.[0] ?? 0;
        const pi = distribution(prompt);
        const grad = gradient[prompt] ?? [];
        for (const token of completion) {
          const upstream = result.gradient[flat] ?? 0;
          for (let answer = 0; answer < pi.length; answer++) {
            grad[answer] = (grad[answer] ?? 0) + upstream * ((answer === token ? 1 : 0) - (pi[answer] ?? 0));
          }
          flat += 1;
        }
      });
      return { loss: result.loss, tokens: result.tokens, clipFraction: result.clipFraction };
    },
    async applyGradients(optimizer: OptimizerStepSettings) {
      const norm = Math.sqrt(gradient.flat().reduce((sum, value) => sum + value * value, 0));
      const scale = optimizer.maxGradNorm !== undefined && norm > optimizer.maxGradNorm ? optimizer.maxGradNorm / norm : 1;
      updates += 1;
      logits = logits.map((row, prompt) =>
        row.map((value, answer) => {
          const g = (gradient[prompt]?.[answer] ?? 0) * scale;
          const m = 0.9 * (moment1[prompt]?.[answer] ?? 0) + 0.1 * g;
          const v = 0.999 * (moment2[prompt]?.[answer] ?? 0) + 0.001 * g * g;
          (moment1[prompt] as number[])[answer] = m;
          (moment2[prompt] as number[])[answer] = v;
          return value - (optimizer.learningRate * (m / (1 - 0.9 ** updates))) / (Math.sqrt(v / (1 - 0.999 ** updates)) + 1e-8);
        }),
      );
      gradient = logits.map((row) => row.map(() => 0));
      return { gradNorm: norm };
    },
    async save(dir) {
      await writeFile(join(dir, 'tabular-policy.json'), JSON.stringify({ logits, moment1, moment2, updates }));
    },
    async load(dir) {
      const state = JSON.parse(await readFile(join(dir, 'tabular-policy.json'), 'utf8'));
      ({ logits, moment1, moment2, updates } = state);
      gradient = logits.map((row) => row.map(() => 0));
    },
  };
}
