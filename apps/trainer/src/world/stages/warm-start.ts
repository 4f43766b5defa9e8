import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRandom, writeFileAtomic } from '@agentflow/core';
import type { Stage } from '../../pipeline/run-stages';
import { demonstrationSamples } from '../demonstrations';
import { POLICY_CHECKPOINTS, type WorldContext } from '../world-context';
import { createWorldPolicyFolder, openWorldPolicy, readJsonIfExists } from '../world-policy';

interface WarmStartProgress {
  epochsDone: number;
  losses: number[];
}

/**
 * Supervised warm start on the expert demonstrations (the `nll` objective: mean negative
 * log-likelihood of the expert's completion tokens). Checkpoints after every epoch, so a
 * killed run resumes at the next epoch with the same adapter and optimiser state.
 */
export const warmStartStage: Stage<WorldContext> = {
  name: 'warm-start',
  async run(context, emit) {
    const { config, run, world } = context;
    const samples = await demonstrationSamples(world, 'train', context.tools.tools, {
      maxSteps: config.policy.maxSteps,
      maxTokens: config.policy.maxNewTokens,
    }, { errors: { rate: config.warmStart.expertErrorRate, kinds: config.warmStart.expertMistakes, random: createRandom(config.seed).fork('expert-errors') } });
    // The planner (and its tokenizer) learn from the demonstrations of the first N tasks only.
    const { demonstrations } = config.warmStart;
    const taught = new Set(world.split('train').slice(0, demonstrations ?? undefined).map((task) => task.id));
    const trainingSamples = samples.filter((sample) => taught.has(sample.taskId));
    await createWorldPolicyFolder(context.policyDir, trainingSamples, config.policy, config.seed);
    const checkpoint = run.checkpoint(POLICY_CHECKPOINTS.warm);
    const progressPath = join(checkpoint, 'progress.json');
    const progress = readJsonIfExists<WarmStartProgress>(progressPath) ?? { epochsDone: 0, losses: [] };
    const policy = await openWorldPolicy(context.policyDir, config.policy, {
      seed: config.seed,
      device: config.device,
      ...(existsSync(join(checkpoint, 'adapter_config.json')) ? { checkpoint } : {}),
    });
    const examples = trainingSamples.map((sample) => policy.encodeExample(sample.prompt, sample.completion));
    const { epochs, batchSize, learningRate, warmupSteps, schedule } = config.warmStart;
    const batchesPerEpoch = Math.ceil(examples.length / batchSize);
    const totalSteps = Math.max(1, epochs * batchesPerEpoch);
    // Linear warm-up, then constant or cosine from the peak down to a tenth of it.
    const rateAt = (step: number) => {
      if (step < warmupSteps) return (learningRate * (step + 1)) / warmupSteps;
      if (schedule === 'constant') return learningRate;
      return learningRate * (0.1 + 0.45 * (1 + Math.cos((Math.PI * (step - warmupSteps)) / Math.max(1, totalSteps - warmupSteps))));
    };
    emit({ type: 'progress', stage: 'warm-start', completed: progress.epochsDone, total: epochs });
    for (let epoch = progress.epochsDone; epoch < epochs; epoch++) {
      // Each epoch's order depends on the seed and the epoch alone, so a resumed run shuffles the same way.
      const order = createRandom(config.seed).fork(`warm-start:${epoch}`).shuffle(examples.map((_, index) => index));
      let lossSum = 0;
      let batches = 0;
      for (let start = 0; start < order.length; start += batchSize) {
        const rows = order.slice(start, start + batchSize).map((index) => examples[index]!);
        const tokens = rows.reduce((sum, row) => sum + row.completionIds.length, 0);
        const stats = await policy.policy.accumulateGradients({
          objective: { kind: 'nll' },
          promptIds: rows.map((row) => row.promptIds),
          completionIds: rows.map((row) => row.completionIds),
          tokenWeights: rows.map((row) => row.completionIds.map(() => 1 / tokens)),
        });
        await policy.policy.applyGradients({ learningRate: rateAt(epoch * batchesPerEpoch + batches), maxGradNorm: 1 });
        lossSum += stats.loss;
        batches++;
      }
      progress.epochsDone = epoch + 1;
      progress.losses.push(lossSum / batches);
      await policy.policy.save(checkpoint);
      writeFileAtomic(progressPath, JSON.stringify(progress));
      run.appendMetrics([{ stage: 'warm-start', step: epoch + 1, loss: lossSum / batches }]);
      emit({ type: 'progress', stage: 'warm-start', completed: epoch + 1, total: epochs, metrics: { loss: lossSum / batches } });
    }
    if (epochs === 0) await policy.policy.save(checkpoint);
    await policy.policy.release();
    return { demonstrations: taught.size, samples: trainingSamples.length, epochs, finalLoss: progress.losses.at(-1) ?? null };
  },
};
