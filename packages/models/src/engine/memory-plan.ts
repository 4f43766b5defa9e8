import { AgentFlowError, describeValue } from '@agentflow/core';
import { dtypeByteSize } from '@agentflow/tensor';
import type { DecoderConfig } from '../config/decoder-config';
import { HEAD_CAST_ELEMENTS } from '../graph/graph-weights';
import { expectedWeightShapes, LINEAR_MODULES, type LinearModule, linearShape, type WeightDtype } from '../weights/weight-names';
import { checkFullTraining, fullTrainingRows, type PlannedFullTraining, referenceScoring } from './full-training-memory';
import { parameterCount } from './parameter-count';
import { graphOf, type PlannedSession, sessionActivations } from './session-activations';

export type { PlannedFullTraining, PlannedReference } from './full-training-memory';
export { layerParameterCount, parameterCount } from './parameter-count';
export { layerWidth, type PlannedSession } from './session-activations';

/**
 * The memory a process needs for its models' sessions, predicted from shapes alone: weights,
 * adapters with their gradients and AdamW moments (or, trained in full, every weight's), frozen
 * references, and each session's activations (session-activations.ts: per-token costs measured at
 * the Qwen3-0.6B shape on the CPU and scaled with the model's widths, so the plan of another shape
 * is an extrapolation, stated as such).
 */

/**
 * LoRA rank the plan proposes instead of full training when that does not fit (the agentflow
 * trainer's default rank, on every linear module).
 */
export const FULL_TRAINING_ALTERNATIVE_LORA_RANK = 128;

/** A model of the process: its shape, where its weights live, its adapter and its sessions. */
export interface PlannedModel {
  name: string;
  config: DecoderConfig;
  /** LoRA rank of the trained adapter (0 or absent: none). */
  loraRank?: number;
  /** Modules the adapter covers; default all seven linear modules. */
  loraModules?: readonly LinearModule[];
  /** The adapter is trained in this process: its gradients and AdamW's two moments are kept. */
  trained?: boolean;
  /**
   * Every weight is trained in this process, instead of an adapter (`loraRank` must be 0 or
   * absent): besides the float32 weights, one float32 gradient accumulator, AdamW's two float32
   * moments and the training session's own copy of the gradients (so 5 x the weights), one or two
   * embedding-sized buffers of the step, and the reference `reference` names (with `'copy'`, its
   * own inference session too). On CUDA the trained weights are fed to the sessions from host
   * memory each run (the CUDA runtime cannot update a session's device copies in place): the
   * sessions' device copies are counted as for any model, and the host copy the optimiser updates
   * besides them. See {@link fullTrainingRows} for what was measured.
   */
  fullTraining?: PlannedFullTraining;
  /**
   * Element type of the base weights (resolveWeightDtype; default float32): matrices count at its
   * size, 1-D tensors (norms, biases) at float32's. Half precision adds, per ONNX Runtime session,
   * the float32 cast of the largest matrix at its use (see {@link castBytes}). Full training
   * needs float32.
   */
  weightDtype?: WeightDtype;
  sessions: readonly PlannedSession[];
}

export interface MemoryPlanSettings {
  device: 'cpu' | 'cuda';
  models: readonly PlannedModel[];
  /** Memory the device has: the machine's RAM on the CPU, the GPU's memory on CUDA. */
  availableBytes: number;
  /**
   * ONNX Runtime's CPU memory arena is on (createRuntime's `cpuMemoryArena`, default true): each
   * session keeps the peak of its own runs, so the sessions' activations add up, as on CUDA. Off,
   * the sessions free what they allocate and reuse one heap: the largest counts. CUDA always adds.
   */
  cpuArena?: boolean;
  /**
   * How CUDA sessions hold weights (createRuntime's `weightPlacement`): 'shared' (its default on
   * CUDA) gives each model one session whose graphs are branches, so one device copy of the
   * weights and one arena, which keeps the largest of the graphs' peaks; 'per-session' gives each
   * graph a session with its own copy and arena. A model trained in full feeds its weights from
   * host memory (SessionSettings.hostWeights), so each of its sessions is counted as before.
   */
  weightPlacement?: 'shared' | 'per-session';
}

/** One line of the plan. */
export interface MemoryPlanRow {
  model: string;
  /** A session's name, or 'weights' / 'adapter' / 'full training' / 'reference' for what the model's sessions share. */
  part: string;
  bytes: number;
  /** How the figure was reached, for the printed plan. */
  detail: string;
}

export interface MemoryPlan {
  device: 'cpu' | 'cuda';
  rows: MemoryPlanRow[];
  /** The sessions' activations share one heap (the CPU with the arena off): the largest counts, not the sum. */
  sharedHeap: boolean;
  /** CUDA with `weightPlacement` 'shared': each model's graphs are one session (one copy, one arena). */
  sessionPerModel: boolean;
  totalBytes: number;
  availableBytes: number;
  fits: boolean;
  /**
   * When the plan does not fit and a model is trained in full: what full training costs before any
   * activation, and the same plan with LoRA (rank {@link FULL_TRAINING_ALTERNATIVE_LORA_RANK})
   * instead, and whether that fits. Empty otherwise.
   */
  advice: string[];
}

const FLOAT32 = 4;
// Process overhead: Node.js, ONNX Runtime and the graphs themselves (measured: about 0.1 GB at start).
const PROCESS_BYTES = 0.25 * 2 ** 30;

function loraParameters(config: DecoderConfig, rank: number, modules: readonly LinearModule[]): number {
  return config.numHiddenLayers * modules.reduce((sum, module) => {
    const [out, inputs] = linearShape(config, module);
    return sum + rank * (out + inputs);
  }, 0);
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

/** Bytes of the model's weights held as `dtype`: matrices at its size, 1-D tensors as float32. */
export function weightBytesOf(config: DecoderConfig, dtype: WeightDtype): number {
  let bytes = 0;
  for (const shape of expectedWeightShapes(config).values()) bytes += shape.reduce((product, dimension) => product * dimension, 1) * (shape.length === 2 ? dtypeByteSize(dtype) : FLOAT32);
  return bytes;
}

/**
 * The float32 bytes a session of `graph` holds at once for half-precision weights cast at their
 * use (WeightInitializers): the largest matrix of a layer, or the head in blocks of
 * HEAD_CAST_ELEMENTS; a training step keeps the head's blocks until its backward, so the whole
 * head there.
 */
function castBytes(config: DecoderConfig, graph: string): number {
  const layer = Math.max(...LINEAR_MODULES.map((module) => linearShape(config, module)[0] * linearShape(config, module)[1]));
  const head = config.vocabSize * config.hiddenSize;
  return FLOAT32 * Math.max(layer, graph === 'training' ? head : Math.min(head, HEAD_CAST_ELEMENTS));
}

/** What full training costs before activations, and the plan with LoRA instead (see MemoryPlan.advice). */
function fullTrainingAdvice(settings: MemoryPlanSettings, rows: readonly MemoryPlanRow[]): string[] {
  const full = settings.models.filter((model) => model.fullTraining);
  if (full.length === 0) return [];
  const advice = full.map((model) => {
    const state = rows.filter((row) => row.model === model.name && (row.part === 'weights' || row.part === 'full training' || row.part === 'reference'));
    const bytes = state.reduce((sum, row) => sum + row.bytes, 0);
    const alone = bytes > settings.availableBytes ? `, more than the ${gib(settings.availableBytes)} available` : '';
    return `${model.name}: full-parameter training holds ${gib(bytes)} before any activation (${state.map((row) => `${row.part} ${gib(row.bytes)}`).join(', ')})${alone}.`;
  });
  const rank = FULL_TRAINING_ALTERNATIVE_LORA_RANK;
  const lora = planMemory({
    ...settings,
    models: settings.models.map((model) => (model.fullTraining ? { ...model, fullTraining: undefined, loraRank: rank, loraModules: LINEAR_MODULES, trained: true } : model)),
  });
  const verdict = lora.fits ? 'which fits' : `which does not fit either (${gib(lora.totalBytes - lora.availableBytes)} over: shorten the micro-batches or recompute the layers)`;
  advice.push(
    `Train ${full.map((model) => model.name).join(' and ')} with LoRA instead: rank ${rank} on every linear module (its reference is the base with the adapter off, no copy) needs ${gib(lora.totalBytes)} in all, ${verdict}.`,
  );
  return advice;
}

/**
 * Predicts the peak memory of a process holding `models` with their sessions on `device`. On the
 * CPU every session of a model reads one copy of its weights (GraphBuilder.weight); on CUDA a
 * model's graphs (inference, training, scalar head) are branches of one ONNX Runtime session with
 * one device copy (`weightPlacement` 'shared'), or each graph a session with its own copy.
 * Activations: each ONNX Runtime session keeps its own peak in its arena, so those of separate
 * sessions add up, and a shared session keeps the largest of its graphs' (on the CPU with the
 * arena off all reuse one heap instead, and the largest counts). A model
 * trained in full adds its gradients, AdamW moments and reference (PlannedModel.fullTraining);
 * when such a plan does not fit, `advice` says what full training holds and what LoRA would need.
 */
export function planMemory(settings: MemoryPlanSettings): MemoryPlan {
  if (!(settings.availableBytes > 0)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `planMemory: availableBytes must be a positive number of bytes, got ${describeValue(settings.availableBytes)}.`,
      details: { availableBytes: settings.availableBytes },
    });
  }
  checkFullTraining(settings.models);
  const sessionPerModel = settings.device === 'cuda' && (settings.weightPlacement ?? 'shared') === 'shared';
  const rows: MemoryPlanRow[] = [{ model: 'process', part: 'runtime', bytes: PROCESS_BYTES, detail: 'Node.js, ONNX Runtime, graphs' }];
  // Peak activations by ONNX Runtime session: uses of one graph share its session.
  const activations = new Map<string, number>();
  for (const model of settings.models) {
    const { config } = model;
    const parameters = parameterCount(config);
    const dtype = model.weightDtype ?? 'float32';
    const weightBytes = weightBytesOf(config, dtype);
    const graphs = new Set(model.sessions.map(graphOf));
    // One ONNX Runtime session for all of the model's graphs (CUDA, 'shared'): one copy, one arena.
    const oneSession = sessionPerModel && !model.fullTraining;
    const copies = settings.device === 'cpu' || oneSession ? 1 : graphs.size;
    const fedFromHost = model.fullTraining && settings.device === 'cuda' ? '; trained in full, so fed from host memory each run (the CUDA runtime cannot update device copies in place)' : '';
    const where =
      settings.device === 'cpu'
        ? 'copy shared by every session'
        : oneSession
          ? `device copy, one ONNX Runtime session whose branches are its graphs (${[...graphs].join(', ')})`
          : `device cop${copies === 1 ? 'y' : 'ies'}, one per ONNX Runtime session (${[...graphs].join(', ')})`;
    rows.push({
      model: model.name,
      part: 'weights',
      bytes: weightBytes * copies,
      detail: `${(parameters / 1e9).toFixed(2)}B parameters, ${dtype} (${gib(weightBytes)}) x ${copies} ${where}${fedFromHost}`,
    });
    if (dtype !== 'float32') {
      const casts = [...graphs].map((graph) => castBytes(config, graph));
      rows.push({
        model: model.name,
        part: 'float32 casts',
        bytes: oneSession ? Math.max(...casts) : casts.reduce((sum, bytes) => sum + bytes, 0),
        detail: `${dtype} matrices cast to float32 where they are used, the largest at once ${oneSession ? 'in the graph that runs' : 'per session'} (${[...graphs].map((graph, index) => `${graph} ${gib(casts[index]!)}`).join(', ')})`,
      });
    }
    if (model.fullTraining) rows.push(...fullTrainingRows(model, model.fullTraining, weightBytes, settings.device));
    if (model.loraRank && model.loraRank > 0) {
      const lora = loraParameters(config, model.loraRank, model.loraModules ?? LINEAR_MODULES);
      const arrays = model.trained ? 4 : 1; // values, gradient sums, AdamW's two moments
      rows.push({
        model: model.name,
        part: 'adapter',
        bytes: lora * FLOAT32 * arrays * (settings.device === 'cpu' ? 1 : 2),
        detail: `LoRA rank ${model.loraRank}: ${(lora / 1e6).toFixed(1)}M parameters${model.trained ? ' with gradients and AdamW moments' : ''}`,
      });
    }
    for (const session of model.sessions) {
      const { bytes, detail } = sessionActivations(config, session);
      const key = oneSession ? model.name : `${model.name}/${graphOf(session)}`;
      activations.set(key, Math.max(activations.get(key) ?? 0, bytes));
      rows.push({ model: model.name, part: `${session.name} (activations)`, bytes, detail });
    }
    const scoring = referenceScoring(model);
    if (scoring) {
      activations.set(`${model.name}/reference`, scoring.bytes);
      rows.push(scoring);
    }
  }
  const fixed = rows.reduce((sum, row) => sum + (row.part.endsWith('(activations)') ? 0 : row.bytes), 0);
  const peaks = [...activations.values()];
  const shared = settings.device === 'cpu' && settings.cpuArena === false;
  const activationTotal = shared ? Math.max(0, ...peaks) : peaks.reduce((sum, bytes) => sum + bytes, 0);
  const totalBytes = fixed + activationTotal;
  const fits = totalBytes <= settings.availableBytes;
  const advice = fits ? [] : fullTrainingAdvice(settings, rows);
  return { device: settings.device, sharedHeap: shared, sessionPerModel, rows, totalBytes, availableBytes: settings.availableBytes, fits, advice };
}

/** The plan as the lines `agentflow run --dry-run` prints. */
export function formatMemoryPlan(plan: MemoryPlan): string[] {
  const lines = plan.rows.map((row) => `    ${row.model} ${row.part}: ${gib(row.bytes)} (${row.detail})`);
  const rule =
    plan.device === 'cuda'
      ? `${plan.sessionPerModel ? "a session per model: its weights once, the largest of its graphs' activations" : 'every session its own weights and activations'}${plan.rows.some((row) => row.part === 'full training') ? ', and the host memory full training holds' : ''}`
      : `weights once, ${plan.sharedHeap ? 'the largest session activations (arena off)' : "every session's activations (each arena keeps its peak)"}`;
  lines.push(
    `    total: ${gib(plan.totalBytes)} of ${gib(plan.availableBytes)} on ${plan.device} (${rule}): ${
      plan.fits ? 'fits' : `DOES NOT FIT: ${gib(plan.totalBytes - plan.availableBytes)} over`
    }`,
  );
  for (const advice of plan.advice) lines.push(`    ${advice}`);
  return lines;
}
