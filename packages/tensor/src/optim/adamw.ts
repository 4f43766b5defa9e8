import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentFlowError, describeValue, writeFileAtomic } from '@agentflow/core';
import type { HostTensor } from '../dtype/dtype';
import { readSafetensors } from '../safetensors/safetensors-reader';
import { writeSafetensors } from '../safetensors/safetensors-writer';
import { globalGradientNorm } from './gradient-clipping';
import type { AdamW, AdamWSettings, AdamWState, AdamWStepSettings, OptimizerStepResult } from './optimizer-types';
import { learningRateAt, validateSchedule } from './schedules';

function invalid(message: string, details: Record<string, unknown>): AgentFlowError {
  return new AgentFlowError({ code: 'INVALID_ARGUMENT', message, details });
}

/** The hyper-parameters after defaults, checked. */
function resolveHyperParameters(settings: Omit<AdamWSettings, 'schedule'>) {
  const beta1 = settings.beta1 ?? 0.9;
  const beta2 = settings.beta2 ?? 0.999;
  const epsilon = settings.epsilon ?? 1e-8;
  const weightDecay = settings.weightDecay ?? 0.01;
  const maxGradNorm = settings.maxGradNorm ?? 0;
  const decays = settings.decays ?? (() => true);
  for (const [key, value] of Object.entries({ beta1, beta2 })) {
    if (!(value >= 0 && value < 1)) throw invalid(`AdamW ${key} must lie in [0, 1), got ${describeValue(value)}.`, { [key]: value });
  }
  if (!(epsilon > 0) || !(weightDecay >= 0) || !(maxGradNorm >= 0)) {
    throw invalid(`AdamW needs epsilon > 0, weightDecay >= 0, maxGradNorm >= 0; got ${epsilon}, ${weightDecay}, ${maxGradNorm}.`, {
      epsilon,
      weightDecay,
      maxGradNorm,
    });
  }
  return { beta1, beta2, epsilon, weightDecay, maxGradNorm, decays };
}

/**
 * One AdamW update (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", 2019) of
 * `parameters`, in place, with the moments of `state`, also in place (created at zero for a
 * parameter that has none; `state.step` advances by one). Per element, with t = state.step + 1:
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p = p (1 - lr wd) - (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * (PyTorch's AdamW, written as torch.optim.adamw does). Optionally clips the gradients to a
 * global norm first. Arithmetic is float64 per element and parameters are visited in name order,
 * so runs repeat bit for bit. Nothing is copied: a caller that keeps `state` between steps
 * (a policy training every weight of a model) holds one set of moments.
 */
export function adamWStep(
  state: AdamWState,
  parameters: Readonly<Record<string, Float32Array>>,
  gradients: Readonly<Record<string, Float32Array>>,
  settings: AdamWStepSettings,
): OptimizerStepResult {
  const { beta1, beta2, epsilon, weightDecay, maxGradNorm, decays } = resolveHyperParameters(settings);
  const { learningRate } = settings;
  if (!(learningRate >= 0)) throw invalid(`AdamW learning rate must be >= 0, got ${describeValue(learningRate)}.`, { learningRate });
  const names = Object.keys(parameters).sort();
  for (const name of names) {
    const gradient = gradients[name];
    if (gradient === undefined || gradient.length !== parameters[name]!.length) {
      throw invalid(
        `AdamW: gradient for ${describeValue(name)} is ${gradient === undefined ? 'missing' : `of length ${gradient.length}`}; the parameter has ${parameters[name]!.length} values.`,
        { name },
      );
    }
  }
  const gradNorm = globalGradientNorm(Object.fromEntries(names.map((name) => [name, gradients[name]!])));
  if (!Number.isFinite(gradNorm)) {
    throw new AgentFlowError({
      code: 'RUNTIME_ERROR',
      message: `AdamW: the gradient norm is ${gradNorm}; refusing to corrupt the parameters (step ${state.step + 1}).`,
      details: { step: state.step + 1 },
    });
  }
  const clipped = maxGradNorm > 0 && gradNorm > maxGradNorm;
  const scale = clipped ? maxGradNorm / (gradNorm + 1e-6) : 1;
  const t = state.step + 1;
  // Constants of the step, hoisted out of the loop over elements (one division per element is left).
  const stepSize = learningRate / (1 - beta1 ** t);
  const inverseRootCorrection2 = 1 / Math.sqrt(1 - beta2 ** t);
  const oneMinusBeta1 = 1 - beta1;
  const oneMinusBeta2 = 1 - beta2;
  for (const name of names) {
    const parameter = parameters[name]!;
    const gradient = gradients[name]!;
    let moments = state.moments[name];
    if (moments === undefined) {
      moments = { m: new Float32Array(parameter.length), v: new Float32Array(parameter.length) };
      state.moments[name] = moments;
    }
    const { m, v } = moments;
    const keep = 1 - learningRate * (decays(name) ? weightDecay : 0);
    for (let i = 0; i < parameter.length; i++) {
      const g = gradient[i]! * scale;
      const mi = beta1 * m[i]! + oneMinusBeta1 * g;
      const vi = beta2 * v[i]! + oneMinusBeta2 * g * g;
      m[i] = mi;
      v[i] = vi;
      parameter[i] = parameter[i]! * keep - (stepSize * mi) / (Math.sqrt(vi) * inverseRootCorrection2 + epsilon);
    }
  }
  state.step = t;
  return { step: t, learningRate, gradNorm, clipped };
}

/**
 * AdamW over named float32 parameters, updated in place, with its own state and a learning-rate
 * schedule: each step is {@link adamWStep} at the schedule's rate.
 */
export function createAdamW(settings: AdamWSettings): AdamW {
  validateSchedule(settings.schedule);
  resolveHyperParameters(settings); // refuses invalid settings at construction, not at the first step
  let state: AdamWState = { step: 0, moments: {} };

  const optimizer: AdamW = {
    nextLearningRate: () => learningRateAt(settings.schedule, state.step),
    step: (parameters, gradients) => adamWStep(state, parameters, gradients, { ...settings, learningRate: learningRateAt(settings.schedule, state.step) }),
    getState: () => ({
      step: state.step,
      moments: Object.fromEntries(Object.entries(state.moments).map(([name, { m, v }]) => [name, { m: m.slice(), v: v.slice() }])),
    }),
    setState(next) {
      if (!Number.isInteger(next.step) || next.step < 0) throw invalid(`AdamW state step must be an integer >= 0, got ${describeValue(next.step)}.`, {});
      state = {
        step: next.step,
        moments: Object.fromEntries(Object.entries(next.moments).map(([name, { m, v }]) => [name, { m: m.slice(), v: v.slice() }])),
      };
    },
    save: (directory) => saveAdamWState(directory, state, settings),
    async load(directory) {
      // The arrays just read are this optimiser's own: no copy.
      state = await loadAdamWState(directory);
    },
  };
  return optimizer;
}

/**
 * Writes an AdamW state into `directory`: `optimizer.safetensors` (the moments, written from the
 * state's own arrays) and `optimizer.json` (the step and the settings, defaults resolved). What
 * {@link createAdamW}'s `save` writes, for a state kept outside an optimiser (see adamWStep).
 */
export async function saveAdamWState(directory: string, state: AdamWState, settings: AdamWSettings): Promise<void> {
  const { beta1, beta2, epsilon, weightDecay, maxGradNorm } = resolveHyperParameters(settings);
  const tensors: Record<string, HostTensor> = {};
  for (const [name, { m, v }] of Object.entries(state.moments)) {
    tensors[`${name}.exp_avg`] = { dtype: 'float32', shape: [m.length], data: m };
    tensors[`${name}.exp_avg_sq`] = { dtype: 'float32', shape: [v.length], data: v };
  }
  await writeSafetensors(join(directory, 'optimizer.safetensors'), tensors, { format: 'agentflow-adamw' });
  const json = { kind: 'adamw', step: state.step, parameters: Object.keys(state.moments).sort(), beta1, beta2, epsilon, weightDecay, maxGradNorm, schedule: settings.schedule };
  await writeFileAtomic(join(directory, 'optimizer.json'), `${JSON.stringify(json, null, 2)}\n`);
}

/** Reads the AdamW state {@link saveAdamWState} wrote into `directory`; the moments are the arrays read (no copy). */
export async function loadAdamWState(directory: string): Promise<AdamWState> {
  let json: { kind?: string; step?: number; parameters?: string[] };
  try {
    json = JSON.parse(await readFile(join(directory, 'optimizer.json'), 'utf8'));
  } catch (cause) {
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `Cannot read ${join(directory, 'optimizer.json')}.`, cause, details: { directory } });
  }
  if (json.kind !== 'adamw' || !Array.isArray(json.parameters)) {
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `${join(directory, 'optimizer.json')} is not an AdamW state.`, details: { directory } });
  }
  const step = json.step ?? 0;
  if (!Number.isInteger(step) || step < 0) {
    throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `${join(directory, 'optimizer.json')}: step must be an integer >= 0, got ${describeValue(step)}.`, details: { directory } });
  }
  const { tensors } = await readSafetensors(join(directory, 'optimizer.safetensors'));
  const moments: AdamWState['moments'] = {};
  for (const name of json.parameters) {
    const m = tensors[`${name}.exp_avg`];
    const v = tensors[`${name}.exp_avg_sq`];
    if (m?.dtype !== 'float32' || v?.dtype !== 'float32') {
      throw new AgentFlowError({ code: 'CHECKPOINT_ERROR', message: `Optimizer state in ${directory} lacks float32 moments for ${describeValue(name)}.`, details: { name } });
    }
    moments[name] = { m: m.data as Float32Array, v: v.data as Float32Array };
  }
  return { step, moments };
}
