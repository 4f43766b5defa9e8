import type { HostTensor, TensorDtype } from '../dtype/dtype';

/** The one ONNX opset every graph uses (ReduceSum/Squeeze/Unsqueeze/Split take axes as inputs; ReduceMean/ReduceMax as attributes). */
export const ONNX_OPSET = 17;

/**
 * One dimension of a symbolic shape: a number when known, a name (`'batch'`, `'sequence'`)
 * when symbolic. Dimensions the builder cannot infer get fresh names starting with `'?'`.
 */
export type Dimension = number | string;

/** A tensor of a graph under construction. Identity is by `name` within its graph. */
export interface SymbolicTensor {
  readonly name: string;
  readonly dtype: TensorDtype;
  readonly shape: readonly Dimension[];
}

/** A tensor operand or a plain number (made a scalar constant of the other operand's dtype). */
export type Operand = SymbolicTensor | number;

/** An ONNX attribute value, for {@link GraphBuilder.op}. */
import type { RowFunction } from '../blocking/row-blocked-ops';

export type AttributeValue = number | string | number[] | HostTensor | { float: number } | { floats: number[] };

/** How an output of a raw {@link GraphBuilder.op} call is typed. */
export interface RawOutputSettings {
  dtype: TensorDtype;
  shape: readonly Dimension[];
}

/** Settings for {@link GraphBuilder.op}. */
export interface RawOperatorSettings {
  attributes?: Record<string, AttributeValue>;
  /** One entry per output; default one output with the first input's dtype and shape. */
  outputs?: readonly RawOutputSettings[];
  /** ONNX domain; default the standard domain. */
  domain?: string;
  /** Builder-level facts a composite's gradient rule or lowering reads (never serialised). */
  meta?: Record<string, unknown>;
}

/** Settings for {@link GraphBuilder.slice}. Numbers become constants; tensors must be int64 1-D. */
export interface SliceSettings {
  starts: readonly number[] | SymbolicTensor;
  ends: readonly number[] | SymbolicTensor;
  /** Default: 0..starts.length-1. */
  axes?: readonly number[];
  /** Default: all 1. */
  steps?: readonly number[];
}

/** Settings for {@link GraphBuilder.gradients}. */
export interface GradientSettings {
  /**
   * Upstream gradient of `output` (same shape). Required when `output` is not a scalar;
   * default for a scalar: 1.
   */
  seed?: SymbolicTensor;
  /**
   * Activation recomputation: tensors the forward computes, in forward order (for a transformer,
   * the residual stream entering each layer and leaving the last). The nodes between two
   * consecutive boundaries form a segment whose backward pass recomputes the segment's
   * activations from its input boundary instead of keeping them from the forward: peak memory
   * holds the boundaries and one segment's activations rather than all of them, for about one
   * more forward pass. Gradients are the same.
   */
  recompute?: readonly SymbolicTensor[];
}

/**
 * Settings for {@link GraphBuilder.blockedAttention}. Scores are `scale * q.k`, plus
 * `maskedScore` where a key is hidden, then a softmax over the keys of each query row.
 */
export interface BlockedAttentionSettings {
  /**
   * Query rows per block: each block's scores are [batch, kvHeads, groups, blockSize, total],
   * so memory grows with blockSize x total instead of sequence x total. A sequence no longer
   * than blockSize runs as one block.
   */
  blockSize: number;
  /** Multiplies q.k (1 / sqrt(headDim) in a transformer). */
  scale: number;
  /**
   * The queries are the last `sequence` of the `total` positions (a KV cache's past comes first):
   * key j is visible to query row i only when j <= total - sequence + i.
   */
  causal: boolean;
  /** [batch, total] int64, int32 or bool: 1 (true) where the key is real, 0 where it is padding. Default all visible. */
  keyMask?: SymbolicTensor;
  /**
   * Added to the score of a hidden key. Default -1e9: finite, so a row whose keys are all hidden
   * (left padding) gets a uniform softmax instead of NaN, and no NaN reaches the gradients.
   */
  maskedScore?: number;
}

/** Settings for {@link GraphBuilder.rowBlocked}. */
export interface RowBlockedSettings {
  /**
   * Rows (axis 1 of every row input) per block: the function's intermediate tensors, and in the
   * backward their gradients, exist for one block at a time. A sequence no longer than blockSize
   * runs as one block.
   */
  blockSize: number;
}

/** Settings for {@link GraphBuilder.toBytes}. */
export interface SerializeSettings {
  /** How weights are written: as graph inputs (default) or as external-data initializers. */
  weights?: 'inputs' | 'external';
}

/** Settings for {@link GraphBuilder.save}. */
export interface SaveModelSettings {
  /**
   * Store initializers in `<path>.data` (ONNX external data) instead of inside the protobuf.
   * 'auto' (default) does so when the initializers exceed 1.8 GB, under protobuf's 2 GB cap.
   */
  externalData?: boolean | 'auto';
}

/**
 * Builds an ONNX graph (opset {@link ONNX_OPSET}) with typed symbolic tensors. Every method
 * adds nodes and returns the new tensor(s); shapes are inferred eagerly and errors (rank or
 * dimension mismatches, wrong dtypes) are raised at the call that caused them.
 *
 * Axes may be negative (counted from the end), as in ONNX.
 */
export interface GraphBuilder {
  // ---- declarations -------------------------------------------------------------------
  /** Declares a graph input (a feed of the session). */
  input(name: string, dtype: TensorDtype, shape: readonly Dimension[]): SymbolicTensor;
  /**
   * Declares a frozen weight stored in the model. float16/bfloat16 values are converted to
   * float32 (the engine computes in float32) unless `keepDtype` is set.
   */
  initializer(name: string, value: HostTensor, settings?: { keepDtype?: boolean }): SymbolicTensor;
  /**
   * Declares a frozen weight that is bound to the session instead of stored in the model.
   * A session opened with {@link TensorRuntime.openGraph} on the CPU receives it as an input
   * read in place from `value.data` (ONNX Runtime does not copy CPU feeds), so any number of
   * graphs built over the same arrays hold one copy of them; on CUDA it becomes an initializer
   * that each session copies to the device once. The array must not change while a session
   * uses it. The dtype is kept as given (cast in the graph where an operator needs float32).
   */
  weight(name: string, value: HostTensor): SymbolicTensor;
  /** The weights declared with {@link GraphBuilder.weight}, by name. */
  weights(): ReadonlyMap<string, HostTensor>;
  /** A Constant node holding `value` (a number gives a 0-D tensor of `dtype`, default float32). */
  constant(value: HostTensor | number, dtype?: TensorDtype): SymbolicTensor;
  /** Marks `tensor` as a graph output, named `name` (an Identity is added when it differs). */
  output(tensor: SymbolicTensor, name?: string): SymbolicTensor;

  // ---- elementwise, with numpy broadcasting ---------------------------------------------
  add(a: Operand, b: Operand): SymbolicTensor;
  sub(a: Operand, b: Operand): SymbolicTensor;
  mul(a: Operand, b: Operand): SymbolicTensor;
  div(a: Operand, b: Operand): SymbolicTensor;
  pow(base: Operand, exponent: Operand): SymbolicTensor;
  min(a: Operand, b: Operand): SymbolicTensor;
  max(a: Operand, b: Operand): SymbolicTensor;
  neg(x: SymbolicTensor): SymbolicTensor;
  sqrt(x: SymbolicTensor): SymbolicTensor;
  reciprocal(x: SymbolicTensor): SymbolicTensor;
  exp(x: SymbolicTensor): SymbolicTensor;
  log(x: SymbolicTensor): SymbolicTensor;
  sigmoid(x: SymbolicTensor): SymbolicTensor;
  tanh(x: SymbolicTensor): SymbolicTensor;
  cos(x: SymbolicTensor): SymbolicTensor;
  sin(x: SymbolicTensor): SymbolicTensor;
  /** Clamps to [min, max]; either bound may be omitted. */
  clip(x: SymbolicTensor, min?: Operand, max?: Operand): SymbolicTensor;
  /** Boolean results (no gradient flows through them). */
  equal(a: Operand, b: Operand): SymbolicTensor;
  less(a: Operand, b: Operand): SymbolicTensor;
  greater(a: Operand, b: Operand): SymbolicTensor;
  and(a: SymbolicTensor, b: SymbolicTensor): SymbolicTensor;
  not(x: SymbolicTensor): SymbolicTensor;
  /** `condition ? a : b` elementwise, broadcasting all three; `condition` is bool. */
  where(condition: SymbolicTensor, a: Operand, b: Operand): SymbolicTensor;
  cast(x: SymbolicTensor, dtype: TensorDtype): SymbolicTensor;
  identity(x: SymbolicTensor): SymbolicTensor;

  // ---- linear algebra and normalisers --------------------------------------------------------
  /** numpy matmul: [..., m, k] x [..., k, n] -> [..., m, n], batch dimensions broadcast. */
  matmul(a: SymbolicTensor, b: SymbolicTensor): SymbolicTensor;
  /**
   * a @ b^T without transposing b: [..., m, k] x [..., n, k] -> [..., m, n] (ONNX Runtime's
   * com.microsoft FusedMatMul with transB, on the CPU and CUDA). A linear layer with a weight
   * stored as [out, in], as PyTorch stores it, needs no transposed copy.
   */
  matmulTransposed(a: SymbolicTensor, b: SymbolicTensor): SymbolicTensor;
  softmax(x: SymbolicTensor, axis?: number): SymbolicTensor;
  logSoftmax(x: SymbolicTensor, axis?: number): SymbolicTensor;
  reduceSum(x: SymbolicTensor, axes: readonly number[], keepDims?: boolean): SymbolicTensor;
  reduceMean(x: SymbolicTensor, axes: readonly number[], keepDims?: boolean): SymbolicTensor;
  reduceMax(x: SymbolicTensor, axes: readonly number[], keepDims?: boolean): SymbolicTensor;
  /** Index of the maximum along `axis` (int64; no gradient). */
  argMax(x: SymbolicTensor, axis: number, keepDims?: boolean): SymbolicTensor;

  // ---- indexing -----------------------------------------------------------------------
  /** ONNX Gather: out = data.shape[:axis] + indices.shape + data.shape[axis+1:]. Embedding lookup: gather(table, ids). */
  gather(data: SymbolicTensor, indices: SymbolicTensor, axis?: number): SymbolicTensor;
  /** ONNX GatherElements: out has indices' shape; out[i][j] = data[i][indices[i][j]] for axis 1. */
  gatherElements(data: SymbolicTensor, indices: SymbolicTensor, axis: number): SymbolicTensor;
  scatterND(data: SymbolicTensor, indices: SymbolicTensor, updates: SymbolicTensor, reduction?: 'none' | 'add'): SymbolicTensor;
  scatterElements(
    data: SymbolicTensor,
    indices: SymbolicTensor,
    updates: SymbolicTensor,
    axis: number,
    reduction?: 'none' | 'add',
  ): SymbolicTensor;

  // ---- shape handling -----------------------------------------------------------------
  /** ONNX Reshape: a number array (0 copies the input dimension, -1 is inferred) or an int64 1-D tensor. */
  reshape(x: SymbolicTensor, shape: readonly number[] | SymbolicTensor): SymbolicTensor;
  /** Default perm reverses the axes. */
  transpose(x: SymbolicTensor, perm?: readonly number[]): SymbolicTensor;
  unsqueeze(x: SymbolicTensor, axes: readonly number[]): SymbolicTensor;
  squeeze(x: SymbolicTensor, axes: readonly number[]): SymbolicTensor;
  concat(tensors: readonly SymbolicTensor[], axis: number): SymbolicTensor;
  slice(x: SymbolicTensor, settings: SliceSettings): SymbolicTensor;
  /** Splits along `axis` into pieces of the given sizes. */
  split(x: SymbolicTensor, sizes: readonly number[], axis: number): SymbolicTensor[];
  /** ONNX Expand (bidirectional broadcast): a number array such as [1, 1, groups, 1, 1] or an int64 1-D tensor. */
  expand(x: SymbolicTensor, shape: readonly number[] | SymbolicTensor): SymbolicTensor;
  /** ONNX Shape, optionally of dimensions [start, end): an int64 1-D tensor. */
  shape(x: SymbolicTensor, start?: number, end?: number): SymbolicTensor;
  /** ONNX Size: an int64 scalar. */
  size(x: SymbolicTensor): SymbolicTensor;
  /** ONNX Range over scalars (int64 or float). */
  range(start: Operand, limit: Operand, delta: Operand, dtype?: TensorDtype): SymbolicTensor;
  /** A tensor of the given runtime shape (int64 1-D) filled with `value` of `dtype`. */
  constantOfShape(shape: SymbolicTensor, value: number, dtype?: TensorDtype): SymbolicTensor;

  // ---- composites -----------------------------------------------------------------------
  /**
   * Attention computed over blocks of query rows, FlashAttention's way on ONNX operators:
   * `query` [batch, kvHeads, groups, sequence, headDim] (grouped-query attention: `groups` query
   * heads share each key/value head; 1 without it), `key` and `value` [batch, kvHeads, total,
   * headDim]; returns softmax(scale * q.k + mask) @ v, [batch, kvHeads, groups, sequence, headDim].
   * Serialised as an ONNX `Loop` over blocks of `settings.blockSize` rows, each against every
   * key, so no tensor is [sequence, total] per head: memory grows linearly with the sequence.
   * Its gradient is a second `Loop` that recomputes each block's probabilities from the row
   * log-sum-exp the forward saved (FlashAttention's backward) and carries the key and value
   * gradients from block to block. Same values as the unblocked formula within float rounding.
   */
  blockedAttention(query: SymbolicTensor, key: SymbolicTensor, value: SymbolicTensor, settings: BlockedAttentionSettings): SymbolicTensor;

  /**
   * `rowFunction` applied to blocks of `blockSize` rows (axis 1 of every tensor of `rows`) in an
   * ONNX Loop, the blocks' outputs joined: the same values as `rowFunction(g, rows, parameters)`
   * when no row reads another, with one block's intermediate tensors alive at a time. Its
   * gradient is a second Loop that recomputes each block's function and differentiates it
   * (rows' gradients per block, parameters' summed over the blocks). `parameters` are the
   * tensors every block reads whole (weights, LoRA matrices): a tensor of the enclosing graph
   * that needs a gradient must reach the function as one of them, not be read directly. See
   * RowFunction for what the function must allow.
   */
  rowBlocked(rows: readonly SymbolicTensor[], parameters: readonly SymbolicTensor[], rowFunction: RowFunction, settings: RowBlockedSettings): SymbolicTensor[];

  /** Any other ONNX operator. It has no gradient rule unless it is one of the built-in ones. */
  op(opType: string, inputs: readonly (SymbolicTensor | undefined)[], settings?: RawOperatorSettings): SymbolicTensor[];

  // ---- autodiff -----------------------------------------------------------------------
  /**
   * Appends the reverse-mode gradient subgraph of `output` with respect to each of `wrt`
   * (graph inputs, initializers or intermediate float tensors) and returns the gradient
   * tensors in the same order, each with the shape of its tensor. Declare them with
   * {@link GraphBuilder.output} to fetch them. A tensor that `output` does not depend on
   * gets zeros. Throws UNSUPPORTED_OPERATOR naming the first node on a path to `output`
   * that has no gradient rule.
   */
  gradients(output: SymbolicTensor, wrt: readonly SymbolicTensor[], settings?: GradientSettings): SymbolicTensor[];

  // ---- serialisation ------------------------------------------------------------------
  /**
   * The serialised ModelProto (initializers inline). Throws when they exceed 2 GB: use save().
   * Weights ({@link GraphBuilder.weight}) become graph inputs, or with `weights: 'external'`
   * initializers whose data ONNX Runtime takes from `externalData` at session creation.
   */
  toBytes(settings?: SerializeSettings): Uint8Array;
  /** Writes the model to `path` (and `<path>.data` for external data). Sessions load it by path. */
  save(path: string, settings?: SaveModelSettings): Promise<void>;
  /** Counts of what was built, for logs and tests. */
  summary(): {
    nodes: number;
    inputs: number;
    outputs: number;
    initializers: number;
    initializerBytes: number;
    weights: number;
    weightBytes: number;
  };
}
