import { type PlannerAction, type Random, type Trajectory, createRandom } from '@agentflow/core';
import { createDapoTrainer } from '@agentflow/dapo';
import { type TabularPolicy, createTabularPolicy } from '@agentflow/dapo/testing';

/** A prompt is a one-digit sum; token t is the answer t. */
interface SumPrompt {
  id: number;
  a: number;
  b: number;
}

const ANSWERS = 10;
const prompts: SumPrompt[] = Array.from({ length: 12 }, (_value, id) => ({ id, a: id % 5, b: (id * 3) % 5 }));
const policy = createTabularPolicy({ prompts: prompts.length, actions: ANSWERS });

/** One rollout = one trajectory of one step, token-exact (prompt and completion ids, log-probs). */
async function sampleRollouts(prompt: SumPrompt, count: number, random: Random): Promise<Trajectory[]> {
  const requests = Array.from({ length: count }, () => ({ promptIds: [prompt.id], maxTokens: 1, temperature: 1, seed: random.nextUint32() }));
  const generations = await policy.generate(requests);
  return generations.map((generation, rollout) => {
    const action: PlannerAction = { thought: '', action: 'finish', action_input: generation.text };
    return {
      id: `${prompt.id}-${rollout}`,
      question: `${prompt.a} + ${prompt.b}`,
      steps: [
        {
          index: 0,
          prompt: [{ role: 'user', content: `${prompt.a} + ${prompt.b} = ?` }],
          completion: generation.text,
          promptTokenIds: [prompt.id],
          completionTokenIds: generation.tokenIds,
          completionLogprobs: generation.logprobs,
          truncated: false,
          action,
          timings: { plannerMs: 0, toolMs: 0, verifierMs: 0 },
        },
      ],
      answer: generation.text,
      termination: 'finished',
      startedAt: new Date(0).toISOString(),
      durationMs: 0,
    };
  });
}

const expectedAccuracy = (trained: TabularPolicy) =>
  prompts.reduce((sum, prompt) => sum + trained.probability(prompt.id, prompt.a + prompt.b), 0) / prompts.length;

const trainer = createDapoTrainer<SumPrompt>({
  config: {
    groupSize: 8,
    promptsPerBatch: 4,
    promptsPerMiniBatch: 2,
    microBatchRows: 8,
    learningRate: 0.2,
    warmupSteps: 2,
    totalSteps: 30,
    evaluateEvery: 10,
    checkpointEvery: 0,
    dynamicSampling: { kind: 'refill', maxRounds: 30 },
    overlong: { maxLength: 64, cacheLength: 16 },
  },
  policy,
  prompts,
  sampleRollouts,
  scoreOutcome: (prompt, trajectory) => {
    const correct = trajectory.answer === String(prompt.a + prompt.b);
    return { reward: correct ? 1 : 0, correct };
  },
  random: createRandom(0),
  evaluate: async () => ({ accuracy: expectedAccuracy(policy) }),
  onMetrics: (metrics) => {
    if (metrics.evaluation !== undefined) {
      console.log(`step ${metrics.step}: expected accuracy ${metrics.evaluation.accuracy?.toFixed(2)}, groups kept ${metrics.groupsKept}, dropped ${metrics.groupsDropped}`);
    }
  },
});

console.log(`DAPO on a tabular policy: ${prompts.length} one-digit sums, ${ANSWERS} answers each, groups of ${trainer.config.groupSize}`);
console.log(`expected accuracy before training: ${expectedAccuracy(policy).toFixed(2)}`);
await trainer.run();
console.log(`expected accuracy after ${trainer.step} steps: ${expectedAccuracy(policy).toFixed(2)}`);
