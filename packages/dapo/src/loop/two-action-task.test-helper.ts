import type { Random, Trajectory, TrainablePolicy } from '@agentflow/core';
import { createRandomModel, getModelPreset, type Qwen3Model } from '@agentflow/models';

// The two-action task the tiny-Qwen3 DAPO tests train on: the tiny preset's shape with a
// vocabulary of just the two actions (tokens 0 and 1), so the untrained model samples both. The
// right action is the opposite of the prompt's last token, the opposite of what a random model
// tends to do (repeat its input).
export const prompts = [[0, 0], [1, 0], [0, 1], [1, 1]].map((ids) => ({ ids, correct: 1 - (ids.at(-1) as number) }));
export type Prompt = (typeof prompts)[number];

/**
 * The task's random model, untied. Its head is drawn with std 0.1 instead of 0.02: after RMSNorm
 * (hidden size 64) a 0.02-std head caps the gap between the two logits near 1.8, i.e. success
 * <= ~86% (measured: runs plateau at 0.84-0.88), and LoRA does not adapt the head.
 */
export function twoActionModel(): Qwen3Model {
  const model = createRandomModel({ ...getModelPreset('tiny'), vocabSize: 2, eosTokenIds: [], tieWordEmbeddings: false }, 1);
  const head = model.weights.get('lm_head.weight');
  if (head === undefined) throw new Error('the untied model has no lm_head.weight');
  head.data = head.data.map((value) => value * 5);
  return model;
}

/** Expected success: the mean over prompts of p(right action). */
export async function successRate(policy: Pick<TrainablePolicy, 'logprobs'>): Promise<number> {
  const rows = await policy.logprobs({ promptIds: prompts.map((prompt) => prompt.ids), completionIds: prompts.map((prompt) => [prompt.correct]) });
  return rows.reduce((sum, row) => sum + Math.exp(row[0] as number), 0) / prompts.length;
}

/** G one-step rollouts sampled by the policy's own generator (KV cache, one seed per rollout). */
export const rollouts =
  (policy: Pick<TrainablePolicy, 'generate'>) =>
  async (prompt: Prompt, count: number, random: Random): Promise<Trajectory[]> => {
    const generations = await policy.generate(
      Array.from({ length: count }, () => ({ promptIds: prompt.ids, maxTokens: 1, temperature: 1, seed: random.nextUint32() })),
    );
    return generations.map((generation, index) => ({
      id: `${prompt.ids.join('')}-${index}`,
      question: prompt.ids.join(','),
      steps: [
        {
          index: 0,
          prompt: [{ role: 'user', content: prompt.ids.join(',') }],
          completion: generation.text,
          promptTokenIds: prompt.ids,
          completionTokenIds: generation.tokenIds,
          completionLogprobs: generation.logprobs,
          truncated: false,
          action: { thought: '', action: `action-${generation.tokenIds[0]}`, action_input: '' },
          timings: { plannerMs: 0, toolMs: 0, verifierMs: 0 },
        },
      ],
      answer: String(generation.tokenIds[0]),
      termination: 'finished',
      startedAt: '2026-01-01T00:00:00.000Z',
      durationMs: 0,
    }));
  };
