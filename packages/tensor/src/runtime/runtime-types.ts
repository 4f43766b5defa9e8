import type { HostTensor } from '../dtype/dtype';
import type { GraphBuilder } from '../graph/graph-types';
import type { SharedWeightCopy } from './shared-weights-sessions';

/** Where sessions run. 'auto' tries CUDA and falls back to the CPU with one log line. */
export type Device = 'auto' | 'cuda' | 'cpu';

/** The execution provider a session actually uses. */
export type ResolvedDevice = 'cuda' | 'cpu';

/** Receives the runtime's few log lines (the CUDA fallback notice). */
export interface RuntimeLogger {
  warn(message: string): void;
}

/** Settings for {@link createRuntime}. */
export interface RuntimeSettings {
  /** Default 'auto'. */
  device?: Device;
  /** Threads inside one operator (ONNX Runtime default: one per physical core). */
  intraOpThreads?: number;
  /** Threads across independent operators (only used with parallel execution). */
  interOpThreads?: number;
  /**
   * Whether ONNX Runtime's intra-op threads spin while they wait for work (its
   * `session.intra_op.allow_spinning`); default true, as ONNX Runtime. Spinning saves a wake-up
   * per operator when the cores are the process's own; when other processes share them, a spinning
   * thread holds a core the thread it waits for needs. Measured on a 2-core machine shared with a
   * trainer (docs/perf.md, generation): a 25M-shape decode step took 57-62 ms with 2 spinning
   * threads and 30-34 ms with spinning off. The same trade as OpenMP's OMP_WAIT_POLICY=PASSIVE.
   */
  intraOpSpinning?: boolean;
  /** Default 'all' (ONNX Runtime's default). */
  graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'all';
  /**
   * ONNX Runtime's CPU memory arena; default on (ONNX Runtime's default). On, each session keeps
   * the peak of its runs in an arena of its own, so a process with several sessions holds the sum
   * of their peaks; off, a run's activations go back to the process heap and the next session's
   * run reuses them. Measured (docs/perf.md): at the Qwen3-0.6B shape with four sessions 3.5 GB
   * peak on, 3.4 GB off; on the tiny preset log-probs took 2.3-3.5 ms a batch on and 9-16 ms off,
   * generation 63-79 ms on and 88-93 ms off, which made the embedded run's warm start twice as slow.
   */
  cpuMemoryArena?: boolean;
  /**
   * ONNX Runtime's memory pattern; default off (ONNX Runtime's default is on). On, each run after
   * the first of a given shape allocates one planned block on top of what the first run left
   * (4.3 GB instead of 3.5 GB peak at the Qwen3-0.6B shape), and a pattern is kept per distinct
   * input shape, while batches here change shape on almost every call.
   */
  memoryPattern?: boolean;
  /**
   * How sessions from {@link TensorRuntime.openGraph} hold a graph's weights
   * ({@link GraphBuilder.weight}). Default 'auto': 'fed' on the CPU, 'shared' on CUDA.
   * - 'fed': read from their host arrays on every run. On the CPU in place, so every session
   *   over the same arrays reads one copy; on CUDA each run copies every weight to the device.
   * - 'per-session': initializers, so each session holds a copy of its own (on the device on CUDA).
   * - 'shared': initializers held once for all graphs over the same arrays: every such graph is a
   *   branch of one ONNX Runtime session (If nodes on a graph selector, buildSharedWeightsModel),
   *   which is rebuilt when another graph joins. One copy and one memory arena for all of them.
   * {@link SessionSettings.hostWeights} makes a session 'fed' whatever this says.
   */
  weightPlacement?: 'auto' | 'fed' | 'per-session' | 'shared';
  /** CUDA device ordinal, default 0. */
  cudaDeviceId?: number;
  /** Default: `console`. */
  logger?: RuntimeLogger;
}

/** Settings for one {@link TensorRuntime.createSession} or {@link TensorRuntime.openGraph} call. */
export interface SessionSettings {
  /** A label for error messages. */
  name?: string;
  /**
   * {@link TensorRuntime.openGraph} only: feed the graph's weights from their host arrays on
   * every run, on every device, instead of binding a device copy made when the session opens.
   * The CPU always does this; on CUDA it makes the session see in-place updates of the arrays
   * (full-parameter training, where the optimiser writes the weights that generation, scoring
   * and the training step read) at the cost of copying every weight to the device on each run.
   * Default false: CUDA sessions hold their own copy, which later writes to the arrays do not reach.
   */
  hostWeights?: boolean;
}

/**
 * A loaded model. Create it once and call {@link TensorSession.run} for every batch: the
 * graph is optimised once, and weights stay in the session.
 */
export interface TensorSession {
  readonly name: string;
  readonly device: ResolvedDevice;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /**
   * Runs the graph. `feeds` maps every graph input name to a host tensor (float16 and
   * bfloat16 feeds are converted to float32); `fetches` names the outputs wanted (default
   * all). Returns host tensors by name (int64 outputs as BigInt64Array).
   */
  run(feeds: Readonly<Record<string, HostTensor>>, fetches?: readonly string[]): Promise<Record<string, HostTensor>>;
  release(): Promise<void>;
}

/** Creates sessions on one device, resolved once for all of them. */
export interface TensorRuntime {
  /** `model` is serialised bytes (GraphBuilder.toBytes) or a path (GraphBuilder.save, needed for external data). */
  createSession(model: Uint8Array | string, settings?: SessionSettings): Promise<TensorSession>;
  /**
   * Opens a session straight from a graph builder, its weights ({@link GraphBuilder.weight})
   * bound to the session as {@link RuntimeSettings.weightPlacement} says: by default fed in place
   * from their arrays on the CPU (no copy, and the model bytes stay small) and on CUDA held on the
   * device once for every graph over the same arrays (unless `settings.hostWeights`, which feeds
   * them from their arrays there too). The session's `inputNames`
   * leave them out: callers feed only the other inputs. Initializers must fit protobuf's 2 GB
   * (declare large tensors as weights).
   */
  openGraph(graph: GraphBuilder, settings?: SessionSettings): Promise<TensorSession>;
  /**
   * The weight copies that sessions with {@link RuntimeSettings.weightPlacement} 'shared' hold
   * now: one entry per set of weights, naming the sessions that read it. (Sessions of other
   * placements are not listed.)
   */
  sharedWeightCopies(): SharedWeightCopy[];
  /** The device sessions use; undefined until the first session resolved it. */
  readonly device: ResolvedDevice | undefined;
}
