import { AgentFlowError, describeValue } from '@agentflow/core';
import { blockedAttentionLowerings } from '../attention/blocked-attention-lowering';
import { COMPOSITE_DOMAIN } from '../attention/blocked-attention-ops';
import { rowBlockedLowerings } from '../blocking/row-blocked-lowering';
import type { TensorDtype } from '../dtype/dtype';
import { createChildState, emit, freshName, type GraphNode, type GraphState } from './graph-state';
import type { Dimension, GraphBuilder, SymbolicTensor } from './graph-types';

/** What a loop body returns: the next values of the carried tensors, and this iteration's scan outputs. */
export interface LoopBodyResult {
  carried: SymbolicTensor[];
  scans: SymbolicTensor[];
}

/** An ONNX `Loop` as {@link LoweringContext.loop} builds it. */
export interface LoopSettings {
  /** int64 scalar: the number of iterations. */
  tripCount: SymbolicTensor;
  /** Initial values of the loop-carried tensors. */
  carried: readonly SymbolicTensor[];
  /** Dtype and shape of one iteration's value of each scan output (the Loop stacks them on a new axis 0). */
  scans: readonly { dtype: TensorDtype; shape: readonly Dimension[] }[];
  /**
   * Builds the body on its own builder: `iteration` is the int64 scalar iteration number,
   * `carried` the carried tensors' current values. The body may read any tensor of the
   * enclosing graph by using it.
   */
  body(body: GraphBuilder, iteration: SymbolicTensor, carried: SymbolicTensor[]): LoopBodyResult;
}

/** What a composite's lowering sees. */
export interface LoweringContext {
  /** The composite node. */
  node: GraphNode;
  /** Adds nodes that replace the composite; it reads every tensor of the graph. */
  g: GraphBuilder;
  /** Adds an ONNX `Loop` (no condition: `tripCount` iterations); returns its final carried values and stacked scans. */
  loop(settings: LoopSettings): LoopBodyResult;
}

/** Replaces one composite node by standard operators; returns the tensors that stand for its outputs, in order. */
export type CompositeLowering = (context: LoweringContext) => SymbolicTensor[];

const lowerings: Record<string, CompositeLowering> = { ...blockedAttentionLowerings, ...rowBlockedLowerings };

/**
 * The graph as ONNX Runtime gets it: every composite node (domain {@link COMPOSITE_DOMAIN})
 * replaced by the standard operators of its lowering, followed by an Identity per output so its
 * consumers read the same names. Returns `state` itself when it holds no composite; otherwise a
 * copy, leaving `state` unchanged (it may be serialised again, or built on). `builderOver` makes
 * a GraphBuilder that adds to a given state.
 */
export function lowerComposites(state: GraphState, builderOver: (state: GraphState) => GraphBuilder): GraphState {
  if (!state.nodes.some((node) => node.domain === COMPOSITE_DOMAIN)) return state;
  const scratch = createChildState(state, state.name);
  const g = builderOver(scratch);
  const loop = (settings: LoopSettings): LoopBodyResult => {
    const bodyState = createChildState(scratch, freshName(scratch, 'loop_body'));
    const body = builderOver(bodyState);
    const iteration = body.input(freshName(bodyState, 'iteration'), 'int64', []);
    const condition = body.input(freshName(bodyState, 'condition'), 'bool', []);
    const carriedInputs = settings.carried.map((tensor) => body.input(freshName(bodyState, 'carried'), tensor.dtype, tensor.shape));
    const result = settings.body(body, iteration, carriedInputs);
    // Body outputs must be distinct tensors computed in the body: copy inputs, outer tensors and repeats.
    const declare = (tensor: SymbolicTensor) => {
      const computed = bodyState.producers.has(tensor.name) && !bodyState.outputs.includes(tensor);
      body.output(computed ? tensor : body.identity(tensor));
    };
    declare(condition);
    result.carried.forEach(declare);
    result.scans.forEach(declare);
    scratch.counter = bodyState.counter;
    const outputs = emit(
      scratch,
      'Loop',
      [settings.tripCount, undefined, ...settings.carried],
      [
        ...settings.carried.map((tensor) => ({ dtype: tensor.dtype, shape: tensor.shape })),
        ...settings.scans.map((scan) => ({ dtype: scan.dtype, shape: [freshName(scratch, '?iterations'), ...scan.shape] })),
      ],
      { attributes: { body: { subgraph: bodyState } } },
    );
    return { carried: outputs.slice(0, settings.carried.length), scans: outputs.slice(settings.carried.length) };
  };
  const nodes: GraphNode[] = [];
  for (const node of state.nodes) {
    if (node.domain !== COMPOSITE_DOMAIN) {
      nodes.push(node);
      continue;
    }
    const lowering = lowerings[node.opType];
    if (lowering === undefined) {
      throw new AgentFlowError({
        code: 'UNSUPPORTED_OPERATOR',
        message: `No lowering for composite ${describeValue(node.opType)} (node ${node.name}); known composites: ${Object.keys(lowerings).join(', ')}.`,
        details: { opType: node.opType, node: node.name },
      });
    }
    const first = scratch.nodes.length;
    const results = lowering({ node, g, loop });
    nodes.push(...scratch.nodes.slice(first));
    node.outputs.forEach((output, index) => {
      const result = results[index]!;
      nodes.push({ opType: 'Identity', name: freshName(scratch, 'Identity'), domain: '', inputs: [result], outputs: [output], attributes: {}, meta: {} });
    });
  }
  return { ...state, nodes };
}
