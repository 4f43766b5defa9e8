import { join } from 'node:path';
import { AgentFlowError, assertNever, createRandom, type StepScorer } from '@agentflow/core';
import { createDapoTrainer, type DapoConfigInput } from '@agentflow/dapo';
import type { TaskWorldTask } from '@agentflow/eval';
import { createPrmScorer, loadPrm } from '@agentflow/prm';
import type { RunConfig } from '../../config/schema';
import type { Stage } from '../../pipeline/run-stages';
import { runWorldAgent } from '../world-agent';
import { evaluateWorldPolicy } from '../world-evaluation';
import { POLICY_CHECKPOINTS, type WorldContext } from '../world-context';
import { openPlannerCheckpoint } from '../world-policy';
import { agentSettingsOf } from '../world-runs';

/** The credit of the config as DAPO's step-credit setting. */
function creditOf({ credit, processCredit }: RunConfig['train']): DapoConfigInput['credit'] {
  // PURE's soft-minimum temperature is @agentflow/dapo's default (0.1).
  const process = processCredit === 'min' ? ({ kind: 'process-min' } as const) : ({ kind: 'process-sum' } as const);
  switch (credit) {
    case 'outcome':
      return { kind: 'outcome' };
    case 'process':
      return process;
    case 'mix':
      return { kind: 'mix', lambda: 1, process };
    default:
      return assertNever(credit, 'credit');
  }
}

/**
 * DAPO on the warm-started planner: G rollouts per training task, outcome reward from the
 * world's checker, step credit from the PRM (or the outcome broadcast with `--credit
 * outcome`), checkpoints every step, held-out accuracy every `evalEvery` steps.
 */
export const trainStage: Stage<WorldContext> = {
  name: 'train',
  async run(context, emit) {
    const { config, run, world } = context;
    const train = config.train;
    const dapoDir = run.checkpoint(POLICY_CHECKPOINTS.dapo);
    // DAPO continues the warm start's Adam moments when it trains the warm adapter. Measured
    // from the same warm start (60% held-out, lr 1e-3, 20 steps): continued moments 60% -> 63%,
    // fresh moments 60% -> 43% (a fresh Adam's first steps move every parameter by about lr).
    // With `train.lora` the adapter is new (B = 0) and so are its moments.
    const policy = await openPlannerCheckpoint(context, POLICY_CHECKPOINTS.dapo, {
      checkpoint: train.lora === null ? join(run.paths.checkpoints, POLICY_CHECKPOINTS.warm) : null,
    });
    // The KL term's reference is the warm-started planner, frozen: a second copy of it.
    const reference = train.klCoefficient > 0 ? await openPlannerCheckpoint(context, POLICY_CHECKPOINTS.warm) : undefined;
    let stepScorer: StepScorer | undefined;
    if (train.credit !== 'outcome') stepScorer = createPrmScorer(await loadPrm(join(run.paths.checkpoints, 'prm'), { device: config.device }));
    const agent = agentSettingsOf(context, policy.languageModel);
    const evaluationTasks = world.split('test').slice(0, 40);
    let rolloutCounter = 0;
    const trainer = createDapoTrainer<TaskWorldTask>({
      config: {
        groupSize: train.groupSize,
        promptsPerBatch: train.promptsPerStep,
        promptsPerMiniBatch: train.promptsPerUpdate ?? train.promptsPerStep,
        klCoefficient: train.klCoefficient,
        learningRate: train.learningRate,
        warmupSteps: train.warmupSteps,
        totalSteps: train.steps,
        evaluateEvery: train.evalEvery,
        checkpointEvery: 1,
        credit: creditOf(train),
        dynamicSampling: train.dynamicSampling === 'refill' ? { kind: 'refill', maxRounds: train.maxRounds } : { kind: train.dynamicSampling },
        overlong: { enabled: false },
      },
      policy: policy.policy,
      prompts: world.split('train'),
      sampleRollouts: (task, count, random) =>
        Promise.all(
          Array.from({ length: count }, () =>
            runWorldAgent(task.question, agent, {
              taskId: task.id,
              trajectoryId: `train-${task.id}-${rolloutCounter++}`,
              seed: random.nextUint32(),
            }),
          ),
        ),
      scoreOutcome: (task, trajectory) => {
        const correct = world.checkAnswer(task.id, trajectory.answer);
        return { reward: correct ? 1 : 0, correct };
      },
      ...(stepScorer ? { stepScorer } : {}),
      ...(reference ? { referencePolicy: reference.policy } : {}),
      random: createRandom(config.seed).fork('dapo'),
      checkpointDir: dapoDir,
      evaluate: async (step) => {
        const evaluation = await evaluateWorldPolicy(context, policy.languageModel, { tasks: evaluationTasks, idPrefix: `train-eval-${step}` });
        run.appendMetrics([{ stage: 'eval', step, accuracy: evaluation.summary.accuracy }]);
        return { heldOutAccuracy: evaluation.summary.accuracy };
      },
      onMetrics: (metrics) => {
        const { evaluation: _evaluation, ...numbers } = metrics;
        const row: Record<string, number> = {};
        for (const [key, value] of Object.entries(numbers)) if (typeof value === 'number') row[key] = value;
        run.appendMetrics([{ ...row, stage: 'train', step: metrics.step }]);
        emit({ type: 'progress', stage: 'train', completed: metrics.step, total: train.steps, metrics: { reward: metrics.reward, accuracy: metrics.accuracy } });
      },
    });
    const resumedAt = await trainer.resume();
    emit({ type: 'progress', stage: 'train', completed: resumedAt ?? 0, total: train.steps });
    let stoppedEarly: string | undefined;
    try {
      await trainer.run();
    } catch (error) {
      // No group with a learning signal in maxRounds rounds: the policy answers every prompt
      // the same way. Training cannot go on, but what it learned so far is still evaluated.
      if (!AgentFlowError.hasCode(error, 'RUNTIME_ERROR') || !error.message.startsWith('Dynamic sampling')) throw error;
      stoppedEarly = `DAPO stopped after step ${trainer.step}: ${error.message}`;
      emit({ type: 'log', level: 'warn', message: stoppedEarly });
    }
    const final = run.checkpoint(POLICY_CHECKPOINTS.final);
    await policy.policy.save(final);
    await policy.policy.release();
    await reference?.policy.release();
    return { steps: trainer.step, resumedAt, ...(stoppedEarly ? { stoppedEarly } : {}) };
  },
};
