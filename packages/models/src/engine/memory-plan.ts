import { AgentFlowError, describeValue } from '@agentflow/core';
import { type Qwen3Config, type Qwen3LayerShape, qwen3HeadDim } from '../config/qwen3-config';
import { LINEAR_MODULES, type LinearModule, linearShape } from '../weights/weight-names';

/**
 * The memory a process needs for its models' sessions, predicted from shapes alone: weights,
 * adapters with their gradients and AdamW moments, and each session's activations. The
 * activation terms are per-token costs of this package's graphs measured at the Qwen3-0.6B
 * shape on the CPU (packages/models/bench/memory-bench.mjs, docs/perf.md) and scaled with the
 * model's widths, so the plan of another shape is an extrapolation, stated as such.
 */

/** One session a model opens. Token counts are padded tokens (rows x longest row). */
export type PlannedSession =
  | {
      kind: 'inference';
      /** E.g. 'generation and log-probs', 'reference'. */
      name: string;
      /** Rows run together (generation batch, or log-prob micro-batch rows). */
      rows: number;
      /** Tokens of the longest row: prompt + completion. */
      sequence: number;
      /** Tokens per row whose log-probs are taken (the completion); 0 for generation alone. */
      scored: number;
      /** Tokens per run when the prompt is fed in chunks (generate's prefillChunkTokens); default the whole sequence. */
      chunk?: number;
    }
  | {
      kind: 'training';
      name: string;
      /** Padded tokens of one micro-batch (rows x longest row). */
      tokens: number;
      /** Rows of one micro-batch. */
      rows: number;
      /** Completion tokens of one micro-batch (the LM head runs on these only). */
      completionTokens: number;
      /** Layer activations recomputed in the backward pass (TrainingGraphSettings.recompute). */
      recompute: boolean;
    }
  | {
      kind: 'scalar-head';
      name: string;
      rows: number;
      sequence: number;
      /** A training session (MSE and gradients) rather than scoring only. */
      training: boolean;
      recompute?: boolean;
    };

/** A model of the process: its shape, where its weights live, its adapter and its sessions. */
export interface PlannedModel {
  name: string;
  config: Qwen3Config;
  /** LoRA rank of the trained adapter (0 or absent: none). */
  loraRank?: number;
  /** Modules the adapter covers; default all seven linear modules. */
  loraModules?: readonly LinearModule[];
  /** The adapter is trained in this process: its gradients and AdamW's two moments are kept. */
  trained?: boolean;
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
}

/** One line of the plan. */
export interface MemoryPlanRow {
  model: string;
  /** A session's name, or 'weights' / 'adapter' for what the model's sessions share. */
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
  totalBytes: number;
  availableBytes: number;
  fits: boolean;
}

const FLOAT32 = 4;
// Process overhead: Node.js, ONNX Runtime and the graphs themselves (measured: about 0.1 GB at start).
const PROCESS_BYTES = 0.25 * 2 ** 30;

// Activation coefficients, in float32 values, in units of the widths they scale with: marginal
// costs fitted to training steps measured at the Qwen3-0.6B shape on the CPU (five shapes, each
// within 0.5% with an intercept of -1.1 GB, the heap a process already has, which the plan leaves
// out: small batches come out up to 1.1 GB high; docs/perf.md).
/** Training, activations kept: values per token and layer, per unit of layer width. */
const TRAIN_KEPT_PER_WIDTH = 7.13;
/** Training, activations kept: attention-score values per layer, per head and (row length)^2. */
const TRAIN_ATTENTION_COPIES = 9.34;
/** Vocabulary-wide values per completion token in the training step (logits, log-softmax, their gradients). */
const TRAIN_VOCAB_COPIES = 12.25;
/**
 * Training, recomputed (`recompute: true`): the graph keeps the residual stream at each layer
 * boundary until the backward pass reaches it and recomputes one layer at a time. Fitted to eight
 * training steps measured at the Qwen3-0.6B shape on the CPU (256 to 2,048 tokens, 1 to 4 rows,
 * 32 to 128 completion tokens; each within 11%, six within 4%; docs/perf.md):
 * - values kept per token and layer, per unit of hidden size (the boundaries and what the arena
 *   holds beside them; from the growth with the layer count, 1,024 tokens, 6 to 14 layers);
 * - values per token of the layer being recomputed, per unit of layer width;
 * - attention-score copies of that layer, per head and (row length)^2;
 * - vocabulary-wide values per completion token (logits, log-softmax and their gradients);
 * - a constant per step (the session's own allocations).
 */
const TRAIN_RECOMPUTED_PER_HIDDEN = 3.6;
const TRAIN_RECOMPUTED_PER_WIDTH = 0.19;
const TRAIN_RECOMPUTED_ATTENTION_COPIES = 5.42;
const TRAIN_RECOMPUTED_VOCAB_COPIES = 3.72;
const TRAIN_RECOMPUTED_SESSION_BYTES = 0.2 * 2 ** 30;
/** Inference: values per token per unit of layer width (one layer alive at a time). */
const INFER_PER_WIDTH = 1;
/** Inference: vocabulary-wide values per scored token (logits, log-softmax, entropy). */
const INFER_VOCAB_COPIES = 3;

/** The widths one decoder layer works with per token: hidden, q, k, v, and three MLP widths. */
export function layerWidth(config: Qwen3Config): number {
  const q = config.numAttentionHeads * config.headDim;
  const kv = config.numKeyValueHeads * config.headDim;
  return config.hiddenSize + q + 2 * kv + 3 * config.intermediateSize;
}

/**
 * Parameters of one decoder layer: its seven linear modules and its four norms (input,
 * post-attention, q and k). Takes a shape before it is a config (`headDim` absent is
 * hiddenSize / numAttentionHeads), e.g. to bound a model's size before creating it.
 */
export function layerParameterCount(shape: Qwen3LayerShape): number {
  const sizes = { ...shape, headDim: qwen3HeadDim(shape) };
  const linear = LINEAR_MODULES.reduce((sum, module) => {
    const [out, inputs] = linearShape(sizes, module);
    return sum + out * inputs;
  }, 0);
  return linear + 2 * sizes.hiddenSize + 2 * sizes.headDim;
}

/** Parameters of the model (the tied head counted once). */
export function parameterCount(config: Qwen3Config): number {
  const embedding = config.vocabSize * config.hiddenSize;
  return config.numHiddenLayers * layerParameterCount(config) + config.hiddenSize + embedding * (config.tieWordEmbeddings ? 1 : 2);
}

function loraParameters(config: Qwen3Config, rank: number, modules: readonly LinearModule[]): number {
  return config.numHiddenLayers * modules.reduce((sum, module) => {
    const [out, inputs] = linearShape(config, module);
    return sum + rank * (out + inputs);
  }, 0);
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

/** Training-graph values: per-token and attention values of every layer, and the head's vocabulary-wide ones. */
function trainingValues(config: Qwen3Config, rows: number, perRow: number, completionTokens: number, recompute: boolean) {
  const tokens = rows * perRow;
  const width = layerWidth(config);
  const layers = config.numHiddenLayers;
  const attention = TRAIN_ATTENTION_COPIES * config.numAttentionHeads * rows * perRow * perRow; // one layer
  const head = TRAIN_VOCAB_COPIES * completionTokens * config.vocabSize;
  if (!recompute) {
    const layerValues = layers * (tokens * TRAIN_KEPT_PER_WIDTH * width + attention);
    return { layerValues, head, total: layerValues + head };
  }
  const recomputedAttention = TRAIN_RECOMPUTED_ATTENTION_COPIES * config.numAttentionHeads * rows * perRow * perRow; // one layer
  const layerValues =
    layers * tokens * TRAIN_RECOMPUTED_PER_HIDDEN * config.hiddenSize + tokens * TRAIN_RECOMPUTED_PER_WIDTH * width + recomputedAttention + TRAIN_RECOMPUTED_SESSION_BYTES / FLOAT32;
  const recomputedHead = TRAIN_RECOMPUTED_VOCAB_COPIES * completionTokens * config.vocabSize;
  return { layerValues, head: recomputedHead, total: layerValues + recomputedHead };
}

function sessionActivations(config: Qwen3Config, session: PlannedSession): { bytes: number; detail: string } {
  const width = layerWidth(config);
  const layers = config.numHiddenLayers;
  const vocab = config.vocabSize;
  const heads = config.numAttentionHeads;
  const kv = config.numKeyValueHeads * config.headDim;
  if (session.kind === 'training') {
    const values = trainingValues(config, session.rows, session.tokens / session.rows, session.completionTokens, session.recompute);
    return {
      bytes: FLOAT32 * values.total,
      detail: `${session.tokens} tokens (${session.rows} rows, ${session.completionTokens} completion tokens)${session.recompute ? ', layers recomputed' : ''}: layers ${gib(FLOAT32 * values.layerValues)}, LM head ${gib(FLOAT32 * values.head)}`,
    };
  }
  const tokens = session.rows * session.sequence;
  const cache = 2 * layers * kv * tokens; // the present keys and values of every layer
  const perRun = session.kind === 'inference' ? Math.min(session.chunk ?? session.sequence, session.sequence) : session.sequence;
  const scores = 3 * heads * session.rows * perRun * session.sequence;
  if (session.kind === 'scalar-head') {
    const values = session.training
      ? trainingValues(config, session.rows, session.sequence, 0, session.recompute ?? false).total
      : session.rows * perRun * INFER_PER_WIDTH * width + scores;
    return { bytes: FLOAT32 * values, detail: `${session.rows} rows x ${session.sequence} tokens${session.training ? `, training${session.recompute ? ', layers recomputed' : ''}` : ''}` };
  }
  // The head runs at the scored positions and the last one (sampling).
  const logits = INFER_VOCAB_COPIES * vocab * session.rows * (session.scored + 1);
  const values = session.rows * perRun * INFER_PER_WIDTH * width + logits + cache + scores;
  return {
    bytes: FLOAT32 * values,
    detail: `${session.rows} rows x ${session.sequence} tokens, ${session.scored} scored a row: KV cache ${gib(FLOAT32 * cache)}, LM head ${gib(FLOAT32 * logits)}`,
  };
}

/** The graph (and so the ONNX Runtime session) a planned session runs on. */
function graphOf(session: PlannedSession): string {
  if (session.kind === 'scalar-head') return session.training ? 'scalar-head training' : 'scalar head';
  return session.kind;
}

/**
 * Predicts the peak memory of a process holding `models` with their sessions on `device`. On the
 * CPU every session of a model reads one copy of its weights (GraphBuilder.weight); on CUDA each
 * ONNX Runtime session (one per graph: inference, training, scalar head) holds its own device
 * copy. Activations: each ONNX Runtime session keeps its own peak in its arena, so those add up
 * (on the CPU with the arena off they reuse one heap instead, and the largest counts).
 */
export function planMemory(settings: MemoryPlanSettings): MemoryPlan {
  if (!(settings.availableBytes > 0)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `planMemory: availableBytes must be a positive number of bytes, got ${describeValue(settings.availableBytes)}.`,
      details: { availableBytes: settings.availableBytes },
    });
  }
  const rows: MemoryPlanRow[] = [{ model: 'process', part: 'runtime', bytes: PROCESS_BYTES, detail: 'Node.js, ONNX Runtime, graphs' }];
  // Peak activations by ONNX Runtime session: uses of one graph share its session.
  const activations = new Map<string, number>();
  for (const model of settings.models) {
    const { config } = model;
    const parameters = parameterCount(config);
    const weightBytes = parameters * FLOAT32;
    const graphs = new Set(model.sessions.map(graphOf));
    const copies = settings.device === 'cpu' ? 1 : graphs.size;
    rows.push({
      model: model.name,
      part: 'weights',
      bytes: weightBytes * copies,
      detail: `${(parameters / 1e9).toFixed(2)}B parameters, float32 (${gib(weightBytes)}) x ${copies} ${settings.device === 'cpu' ? 'copy shared by every session' : `device cop${copies === 1 ? 'y' : 'ies'}, one per ONNX Runtime session (${[...graphs].join(', ')})`}`,
    });
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
      const key = `${model.name}/${graphOf(session)}`;
      activations.set(key, Math.max(activations.get(key) ?? 0, bytes));
      rows.push({ model: model.name, part: `${session.name} (activations)`, bytes, detail });
    }
  }
  const fixed = rows.reduce((sum, row) => sum + (row.part.endsWith('(activations)') ? 0 : row.bytes), 0);
  const peaks = [...activations.values()];
  const shared = settings.device === 'cpu' && settings.cpuArena === false;
  const activationTotal = shared ? Math.max(0, ...peaks) : peaks.reduce((sum, bytes) => sum + bytes, 0);
  const totalBytes = fixed + activationTotal;
  return { device: settings.device, sharedHeap: shared, rows, totalBytes, availableBytes: settings.availableBytes, fits: totalBytes <= settings.availableBytes };
}

/** The plan as the lines `agentflow run --dry-run` prints. */
export function formatMemoryPlan(plan: MemoryPlan): string[] {
  const lines = plan.rows.map((row) => `    ${row.model} ${row.part}: ${gib(row.bytes)} (${row.detail})`);
  const rule =
    plan.device === 'cuda'
      ? 'every session its own weights and activations'
      : `weights once, ${plan.sharedHeap ? 'the largest session activations (arena off)' : "every session's activations (each arena keeps its peak)"}`;
  lines.push(
    `    total: ${gib(plan.totalBytes)} of ${gib(plan.availableBytes)} on ${plan.device} (${rule}): ${
      plan.fits ? 'fits' : `DOES NOT FIT: ${gib(plan.totalBytes - plan.availableBytes)} over`
    }`,
  );
  return lines;
}
