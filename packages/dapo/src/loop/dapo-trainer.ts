import { learningRateAt } from '../math/learning-rate';
import {
  AgentFlowError,
  type PolicyObjective,
  type Random,
  type StepScorer,
  type TrainablePolicy,
  type Trajectory,
} from '@agentflow/core';
import PQueue from 'p-queue';
import { type DapoConfig, type DapoConfigInput, parseDapoConfig } from '../config/dapo-config';
import { collectGroups } from '../sampling/collect-groups';
import { resolveGroupSignal } from '../sampling/group-signal';
import { boundedK3 } from '../math/reference-kl';
import { loadLatestCheckpoint, markCommitted, saveCheckpoint } from './checkpoint-store';
import { type DataCursor, createDataCursor } from './data-cursor';
import { type OutcomeScore, type ScoredGroup, rolloutScoredGroup } from './scored-group';
import { prmOutcomeFit } from './prm-freshness';
import { type DapoStepMetrics, createWeightedMean } from './step-metrics';
import { type TrainingRow, buildMicroBatches, buildTrainingRows, logprobsInLengthOrder, miniBatchRowIndices } from './training-rows';

export interface DapoTrainerSettings<Prompt> {
  /** DAPO hyper-parameters; parsed with dapoConfigSchema (defaults filled in). */
  config?: DapoConfigInput;
  policy: TrainablePolicy;
  /** The training prompts; served in shuffled epochs. */
  prompts: readonly Prompt[];
  /** Rolls out `count` trajectories of one prompt; steps must carry token ids. Use only `random` for randomness. */
  sampleRollouts(prompt: Prompt, count: number, random: Random): Promise<Trajectory[]>;
  /** The outcome checker. */
  scoreOutcome(prompt: Prompt, trajectory: Trajectory): OutcomeScore | Promise<OutcomeScore>;
  /** The PRM, for process credit (unless rollouts carry stepRewards). */
  stepScorer?: StepScorer;
  /** Log-probs of the reference policy, needed when klCoefficient > 0. */
  referencePolicy?: Pick<TrainablePolicy, 'logprobs'>;
  /** The run's seeded random source; its state is checkpointed. */
  random: Random;
  /** Where checkpoints go; without it nothing is saved and resume() returns null. */
  checkpointDir?: string;
  /** Checkpoints kept on disk (newest first). Default 2. */
  keepCheckpoints?: number;
  /**
   * Right after each step of `run()` (progress, logs). After a kill, the steps since the last
   * checkpoint run again on resume and are reported again: record steps with `onCommitted`.
   */
  onMetrics?(metrics: DapoStepMetrics): void | Promise<void>;
  /**
   * The durable record of `run()`: the steps a checkpoint holds, in order, once each, called
   * right after that checkpoint is saved (every step when there is no `checkpointDir`). A step
   * lost to a kill before its checkpoint is never committed (it runs again after the resume).
   * If the process dies after a checkpoint and before this call returns, `resume()` delivers
   * that checkpoint's steps again: a consumer that may have written some of them keys them by
   * `step`. When `run()` ends with an error, the steps since the last checkpoint are
   * checkpointed and committed first (training stopped on them; what follows saves their policy).
   */
  onCommitted?(steps: readonly DapoStepMetrics[]): void | Promise<void>;
  /** Called every config.evaluateEvery steps; its numbers are attached to that step's metrics. */
  evaluate?(step: number): Promise<Record<string, number>>;
  /** Milliseconds; injected for tests. Default performance.now. */
  clock?: () => number;
}

export interface DapoTrainer {
  readonly config: DapoConfig;
  /** Steps completed so far. */
  readonly step: number;
  /** Restores the latest checkpoint (policy, random state, data cursor, step); returns the step, or null when there is none. */
  resume(): Promise<number | null>;
  /** One training step: roll out, filter and refill, credit, update. */
  trainStep(): Promise<DapoStepMetrics>;
  /** Trains until config.totalSteps (or `untilStep`), checkpointing and evaluating on schedule. */
  run(settings?: { untilStep?: number }): Promise<DapoStepMetrics[]>;
}

/** Creates the DAPO training loop over a TrainablePolicy. */
export function createDapoTrainer<Prompt>(settings: DapoTrainerSettings<Prompt>): DapoTrainer {
  const config = parseDapoConfig(settings.config ?? {});
  const { policy, random } = settings;
  const clock = settings.clock ?? (() => performance.now());
  if (config.klCoefficient > 0 && settings.referencePolicy === undefined) {
    throw new AgentFlowError({ code: 'INVALID_CONFIG', message: `klCoefficient ${config.klCoefficient} needs a referencePolicy.` });
  }
  const objective: PolicyObjective = {
    kind: 'clipped-surrogate',
    epsLow: config.epsLow,
    epsHigh: config.epsHigh,
    klCoefficient: config.klCoefficient,
  };
  let step = 0;
  let cursor: DataCursor | undefined;
  const getCursor = () => {
    cursor ??= createDataCursor(settings.prompts.length, random);
    return cursor;
  };
  const queue = new PQueue({ concurrency: config.rolloutConcurrency });
  // A config without `signal` filters on outcomes, or on outcomes or step scores with process credit.
  const dynamicSampling =
    config.dynamicSampling.kind === 'off' ? config.dynamicSampling : { ...config.dynamicSampling, ...resolveGroupSignal(config.credit, config.dynamicSampling) };

  const generateGroups = async (count: number): Promise<ScoredGroup[]> => {
    const indices = getCursor().take(count);
    // Fork in prompt order before any rollout starts, so results do not depend on timing.
    const forks = indices.map((index) => random.fork(`rollout-${index}`));
    return Promise.all(
      indices.map((promptIndex, slot) =>
        queue.add(
          () =>
            rolloutScoredGroup({
              config,
              prompt: settings.prompts[promptIndex] as Prompt,
              promptIndex,
              random: forks[slot] as Random,
              sampleRollouts: settings.sampleRollouts,
              scoreOutcome: settings.scoreOutcome,
              stepScorer: settings.stepScorer,
            }),
        ),
      ),
    );
  };

  const chunkedLogprobs = (source: Pick<TrainablePolicy, 'logprobs'>, rows: readonly TrainingRow[]) =>
    logprobsInLengthOrder(rows, (batch) => source.logprobs(batch), config);


  const trainStep = async (): Promise<DapoStepMetrics> => {
    const started = clock();
    const generated: ScoredGroup[] = [];
    const collected = await collectGroups<ScoredGroup>({
      dynamicSampling,
      targetGroups: config.promptsPerBatch,
      generate: async (count) => {
        const groups = await generateGroups(count);
        generated.push(...groups);
        return groups;
      },
      rewardsOf: (group) => group.rewards,
      stepScoresOf: (group) => group.stepScores,
      rolloutCountOf: (group) => group.trajectories.length,
    });
    const rows = buildTrainingRows(collected.groups, config);
    // Old log-probs from the training engine itself, once, before the first update.
    const oldLogprobs = await chunkedLogprobs(policy, rows);
    const referenceLogprobs = settings.referencePolicy ? await chunkedLogprobs(settings.referencePolicy, rows) : undefined;
    const referenceKl = createWeightedMean();
    referenceLogprobs?.forEach((reference, index) => {
      const current = oldLogprobs[index] as number[];
      // The KL term's own estimate: k3 per token, bounded.
      const sum = reference.reduce((total, value, token) => total + boundedK3(value, current[token] as number).value, 0);
      referenceKl.add(sum / Math.max(1, reference.length), reference.length);
    });
    const samplerMismatch = createWeightedMean();
    rows.forEach((row, index) => {
      const sampled = row.samplingLogprobs;
      if (sampled === undefined) return;
      const old = oldLogprobs[index] as number[];
      const gap = sampled.reduce((sum, value, token) => sum + Math.abs(value - (old[token] as number)), 0);
      samplerMismatch.add(gap / Math.max(1, sampled.length), sampled.length);
    });
    const learningRate = learningRateAt(config, step);
    const clipFraction = createWeightedMean();
    const approxKl = createWeightedMean();
    const entropy = createWeightedMean();
    let lossSum = 0;
    let gradNormSum = 0;
    let updates = 0;
    const miniBatches = miniBatchRowIndices(rows, config.promptsPerMiniBatch);
    for (let epoch = 0; epoch < config.updateEpochs; epoch++) {
      for (const indices of miniBatches) {
        let loss = 0;
        for (const batch of buildMicroBatches({ rows, indices, oldLogprobs, referenceLogprobs, config, objective })) {
          const stats = await policy.accumulateGradients(batch);
          loss += stats.loss;
          clipFraction.add(stats.clipFraction, stats.tokens);
          approxKl.add(stats.approxKl, stats.tokens);
          entropy.add(stats.entropy, stats.tokens);
        }
        const { gradNorm } = await policy.applyGradients({ learningRate, maxGradNorm: config.maxGradNorm });
        lossSum += loss;
        gradNormSum += gradNorm;
        updates += 1;
      }
    }
    step += 1;
    const rollouts = generated.flatMap((group) => group.rewards.map((reward, index) => ({ reward, correct: group.correct[index] })));
    const tokens = rows.reduce((sum, row) => sum + row.completionIds.length, 0);
    const prmFit = prmOutcomeFit(generated);
    const metrics: DapoStepMetrics = {
      step,
      reward: rollouts.reduce((sum, rollout) => sum + rollout.reward, 0) / Math.max(1, rollouts.length),
      accuracy: rollouts.filter((rollout) => rollout.correct).length / Math.max(1, rollouts.length),
      groupsKept: collected.groups.length,
      groupsGenerated: collected.generatedGroups,
      groupsDropped: collected.droppedGroups,
      rolloutsDropped: collected.droppedRollouts,
      groupsSurplus: collected.surplusGroups,
      equalOutcomeGroups: collected.equalOutcomeGroups,
      prmOutcomeMse: prmFit?.mse ?? null,
      prmOutcomeMseConstant: prmFit?.constant ?? null,
      generationRounds: collected.rounds,
      completions: rows.length,
      tokens,
      loss: updates === 0 ? 0 : lossSum / updates,
      clipFraction: clipFraction.value(),
      approxKl: approxKl.value(),
      referenceKl: referenceKl.value(),
      entropy: entropy.value(),
      samplerMismatch: samplerMismatch.value(),
      gradNorm: updates === 0 ? 0 : gradNormSum / updates,
      optimizerUpdates: updates,
      learningRate,
      seconds: 0,
      tokensPerSecond: 0,
    };
    const seconds = (clock() - started) / 1000;
    metrics.seconds = seconds;
    metrics.tokensPerSecond = seconds > 0 ? tokens / seconds : 0;
    return metrics;
  };

  // Steps run since the last checkpoint: committed with the next one.
  const pending: DapoStepMetrics[] = [];
  const checkpointAndCommit = async () => {
    const steps = pending.splice(0);
    if (settings.checkpointDir !== undefined) {
      await saveCheckpoint(
        settings.checkpointDir,
        policy,
        { version: 1, step, random: random.getState(), cursor: getCursor().getState(), config: resumeRelevant(config), committed: steps },
        settings.keepCheckpoints ?? 2,
      );
    }
    if (steps.length > 0) await settings.onCommitted?.(steps);
    if (settings.checkpointDir !== undefined) markCommitted(settings.checkpointDir);
  };

  return {
    config,
    get step() {
      return step;
    },
    async resume() {
      if (settings.checkpointDir === undefined) return null;
      const state = await loadLatestCheckpoint(settings.checkpointDir, policy);
      if (state === null) return null;
      const expected = resumeRelevant(config);
      const changed = Object.keys(expected).filter((key) => JSON.stringify(expected[key]) !== JSON.stringify(state.config[key]));
      if (changed.length > 0) {
        throw new AgentFlowError({
          code: 'CHECKPOINT_ERROR',
          message: `Cannot resume from ${settings.checkpointDir}: the config changed in ${changed.join(', ')}; resume with the checkpoint's values or start a new run.`,
          details: { changed },
        });
      }
      step = state.step;
      random.setState(state.random);
      cursor = createDataCursor(settings.prompts.length, random, state.cursor);
      // Killed between the checkpoint and the end of its commit: deliver its steps again.
      if (!state.delivered && state.committed !== undefined && state.committed.length > 0) {
        await settings.onCommitted?.(state.committed as DapoStepMetrics[]);
        markCommitted(settings.checkpointDir);
      }
      return step;
    },
    trainStep,
    async run(runSettings = {}) {
      const last = Math.min(runSettings.untilStep ?? config.totalSteps, config.totalSteps);
      const history: DapoStepMetrics[] = [];
      while (step < last) {
        let metrics: DapoStepMetrics;
        try {
          metrics = await trainStep();
        } catch (error) {
          // Training cannot go on (e.g. DYNAMIC_SAMPLING_EXHAUSTED): keep the steps that ran.
          if (pending.length > 0) await checkpointAndCommit();
          throw error;
        }
        if (settings.evaluate && config.evaluateEvery > 0 && step % config.evaluateEvery === 0) {
          metrics.evaluation = await settings.evaluate(step);
        }
        await settings.onMetrics?.(metrics);
        history.push(metrics);
        pending.push(metrics);
        const scheduled = config.checkpointEvery > 0 && step % config.checkpointEvery === 0;
        if (scheduled || step === last || settings.checkpointDir === undefined) await checkpointAndCommit();
      }
      return history;
    },
  };
}

/** The config fields whose change would make a resumed run differ from an uninterrupted one. */
function resumeRelevant(config: DapoConfig): Record<string, unknown> {
  const { totalSteps: _totalSteps, checkpointEvery: _checkpointEvery, evaluateEvery: _evaluateEvery, rolloutConcurrency: _concurrency, ...rest } = config;
  return JSON.parse(JSON.stringify(rest)) as Record<string, unknown>;
}
