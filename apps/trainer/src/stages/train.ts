import { AgentFlowError, createRandom, type MetricsRow, type Stage } from '@agentflow/core';
import { createDapoTrainer, needsStepScores } from '@agentflow/dapo';
import { createOutcomeScorer, type TaskItem } from '@agentflow/eval';
import { createRolloutSampler } from '@agentflow/flow';
import { createRolloutBackend } from '@agentflow/llm';
import { createRunAgent } from '../pipeline/agent';
import { evaluatePlanner } from '../pipeline/evaluate-planner';
import type { PipelineContext } from '../pipeline/pipeline-context';
import { openDapoStart, plannerPhases, POLICY_CHECKPOINTS } from '../pipeline/planner-checkpoints';
import { createRefreshablePrm, readRefreshResult, refreshPrm } from './prm-refresh';

/**
 * DAPO on the warm-started planner: G rollouts per training task, the outcome reward from
 * the task source, step credit from the PRM (or the outcome broadcast with `credit:
 * outcome`), every DAPO setting from `train`, checkpoints every `checkpointEvery` steps,
 * held-out accuracy on the first `evaluationTasks` test tasks every `evaluateEvery` steps.
 * After each step of `prm.refreshAt` the PRM is relabelled and retrained on the policy of that
 * step (./prm-refresh.ts), and the steps after it are scored by the new one.
 */
export const trainStage: Stage<PipelineContext> = {
  name: 'train',
  async run(context, emit) {
    const { config, run, source } = context;
    const { lora: _lora, trainable: _trainable, evaluationTasks, ...dapo } = config.train;
    const dapoDir = run.checkpoint(POLICY_CHECKPOINTS.dapo);
    // DAPO continues the warm start's Adam moments when it trains the warm adapter. Measured
    // from the same warm start (60% held-out, lr 1e-3, 20 steps): continued moments 60% -> 63%,
    // fresh moments 60% -> 43% (a fresh Adam's first steps move every parameter by about lr).
    // With `train.lora` the adapter is new (B = 0) and so are its moments; trained in full, the
    // warm weights start with moments of their own too.
    const policy = await openDapoStart(context);
    const planner = plannerPhases(context);
    // The KL term's reference is the warm-started planner, frozen: with LoRA scored by the
    // policy's own session (one copy of the model), trained in full loaded from its folder.
    const reference = dapo.klCoefficient > 0 ? await planner.warmReference(policy.policy) : undefined;
    // The PRM in use, swapped for a retrained one after each step of prm.refreshAt.
    const scorer = needsStepScores(dapo.credit) ? createRefreshablePrm(context) : undefined;
    // Rollouts in-process, or on vLLM servers that get each step's adapter (policy.rollouts).
    const rollouts = createRolloutBackend({
      rollouts: config.policy.rollouts,
      sampling: config.policy,
      policy: policy.policy,
      languageModel: policy.languageModel,
      tokenizer: policy.tokenizer,
      // vLLM only: the adapter on the folder it applies to (the config refuses vLLM with full training).
      saveAdapter: (path) => planner.saveAdapter(policy.policy, path),
      runRoot: run.root,
      version: (): number => trainer.step,
      log: (message) => emit({ type: 'log', level: 'info', message }),
      warn: (message) => emit({ type: 'log', level: 'warn', message }),
    });
    const agent = createRunAgent(context, rollouts.languageModel);
    const heldOut = source.split('test').slice(0, evaluationTasks);
    // Each step's numbers with the rollout back end's, kept until its checkpoint commits them.
    const rolloutNumbers = new Map<number, Record<string, number>>();
    const recordedSteps = new Set(run.readMetrics().filter((row) => row.stage === 'train').map((row) => row.step));
    const trainer = createDapoTrainer<TaskItem>({
      config: dapo,
      policy: rollouts.trainingPolicy,
      prompts: [...source.split('train')],
      // Each rollout within its task's step budget where it has one (TaskItem.maxSteps, passed on by the sampler).
      sampleRollouts: createRolloutSampler({ run: agent.run, idPrefix: 'train' }),
      // Solved training tasks join the cross-task memory (when on); test tasks never do.
      scoreOutcome: createOutcomeScorer(source, context.crossTask ? { onScored: context.crossTask.remember } : {}),
      ...(scorer ? { stepScorer: scorer.stepScorer } : {}),
      ...(reference ? { referencePolicy: reference } : {}),
      random: createRandom(config.seed).fork('dapo'),
      checkpointDir: dapoDir,
      evaluate: async (step) => {
        const evaluation = await evaluatePlanner(context, agent, { tasks: heldOut, idPrefix: `train-eval-${step}` });
        return { heldOutAccuracy: evaluation.summary.accuracy };
      },
      onMetrics: (metrics) => {
        rolloutNumbers.set(metrics.step, { ...rollouts.stepMetrics(), ...numericFields(metrics) });
        emit({ type: 'progress', stage: 'train', completed: metrics.step, total: dapo.totalSteps, metrics: { reward: metrics.reward, accuracy: metrics.accuracy } });
      },
      // metrics.jsonl records the steps a checkpoint holds, once each: a step lost to a kill
      // runs again after the resume, and one already recorded (a kill during the commit) is not.
      onCommitted: (steps) => {
        const fresh = steps.filter((metrics) => !recordedSteps.has(metrics.step));
        run.appendMetrics(
          fresh.flatMap((metrics): MetricsRow[] => [
            { ...(rolloutNumbers.get(metrics.step) ?? numericFields(metrics)), stage: 'train', step: metrics.step },
            ...(metrics.evaluation ? [{ stage: 'eval', step: metrics.step, accuracy: metrics.evaluation.heldOutAccuracy! }] : []),
          ]),
        );
        for (const metrics of steps) {
          recordedSteps.add(metrics.step);
          rolloutNumbers.delete(metrics.step);
        }
      },
    });
    const resumedAt = await trainer.resume();
    await rollouts.prepare();
    emit({ type: 'progress', stage: 'train', completed: resumedAt ?? 0, total: dapo.totalSteps });
    // The PRM of the latest refresh at or before the step resumed at (made now if a kill stopped it).
    const refreshWith = (step: number) => refreshPrm(context, { step, model: rollouts.languageModel }, emit);
    await scorer?.use(trainer.step, refreshWith);
    let stoppedEarly: string | undefined;
    let saturated = false;
    try {
      for (const until of [...(scorer?.refreshSteps.filter((step) => step > trainer.step) ?? []), dapo.totalSteps]) {
        await trainer.run({ untilStep: until });
        if (until < dapo.totalSteps) await scorer?.use(trainer.step, refreshWith);
      }
    } catch (error) {
      // No group with a learning signal in maxRounds rounds: the policy answers every prompt the
      // same way (saturated: right every time). Training cannot go on; what it learned is evaluated.
      if (!AgentFlowError.hasCode(error, 'DYNAMIC_SAMPLING_EXHAUSTED')) throw error;
      stoppedEarly = `DAPO stopped after step ${trainer.step}: ${error.message}`;
      saturated = error.details?.saturated === true;
      emit({ type: 'log', level: saturated ? 'info' : 'warn', message: stoppedEarly });
    }
    const final = run.checkpoint(POLICY_CHECKPOINTS.final);
    await policy.policy.save(final);
    await policy.policy.release();
    await reference?.release();
    await scorer?.release();
    const prmRefreshes = scorer ? scorer.refreshSteps.filter((step) => step <= trainer.step).map((step) => readRefreshResult(context, step)) : [];
    return { steps: trainer.step, resumedAt, ...(stoppedEarly ? { stoppedEarly, saturated } : {}), ...(prmRefreshes.length > 0 ? { prmRefreshes } : {}) };
  },
};

/** The numeric fields of a step's metrics (a step re-delivered after a resume has no rollout numbers kept). */
function numericFields(metrics: object): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
}
