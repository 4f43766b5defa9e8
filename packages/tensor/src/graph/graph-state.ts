import { AgentFlowError, describeValue } from '@agentflow/core';
import type { HostTensor, TensorDtype } from '../dtype/dtype';
import type { AttributeValue, Dimension, SymbolicTensor } from './graph-types';

/** One node as the builder records it; `meta` keeps builder-level facts (static axes...) for autodiff. */
export interface GraphNode {
  opType: string;
  name: string;
  domain: string;
  inputs: (SymbolicTensor | undefined)[];
  outputs: SymbolicTensor[];
  attributes: Record<string, AttributeValue | SubgraphAttribute>;
  meta: Record<string, unknown>;
}

/** An ONNX graph-valued attribute (a Loop's `body`); its nodes may read tensors of the enclosing graphs by name. */
export interface SubgraphAttribute {
  subgraph: GraphState;
}

/** The mutable record behind one GraphBuilder (never shared between builders). */
export interface GraphState {
  name: string;
  nodes: GraphNode[];
  inputs: SymbolicTensor[];
  initializers: Map<string, { tensor: SymbolicTensor; value: HostTensor }>;
  /** Frozen tensors bound to the session rather than stored in the model (see GraphBuilder.weight). */
  weights: Map<string, { tensor: SymbolicTensor; value: HostTensor }>;
  outputs: SymbolicTensor[];
  tensors: Map<string, SymbolicTensor>;
  producers: Map<string, GraphNode>;
  /** Values of Constant nodes, by output name (shape inference reads reshape targets from them). */
  constantValues: Map<string, HostTensor>;
  /** Constant cache by value key, so repeated axes/scalars share one node. */
  constantCache: Map<string, SymbolicTensor>;
  counter: number;
}

export function createGraphState(name: string): GraphState {
  return {
    name,
    nodes: [],
    inputs: [],
    initializers: new Map(),
    weights: new Map(),
    outputs: [],
    tensors: new Map(),
    producers: new Map(),
    constantValues: new Map(),
    constantCache: new Map(),
    counter: 0,
  };
}

/**
 * A state for nodes that live beside or inside `parent` (a composite's lowering, a Loop body):
 * its tensors may read every tensor of `parent` by identity, its fresh names continue `parent`'s
 * counter (so they never collide with the enclosing graphs' names; copy the counter back with
 * `parent.counter = child.counter` when done), and it has its own nodes, inputs, outputs and
 * constant cache. `parent` itself is not changed.
 */
export function createChildState(parent: GraphState, name: string): GraphState {
  const child = createGraphState(name);
  const own = child.tensors;
  child.tensors = new (class extends Map<string, SymbolicTensor> {
    override get(key: string) {
      return own.get(key) ?? parent.tensors.get(key);
    }
    override has(key: string) {
      return own.has(key) || parent.tensors.has(key);
    }
    override set(key: string, value: SymbolicTensor) {
      own.set(key, value);
      return this;
    }
    override delete(key: string) {
      return own.delete(key);
    }
  })();
  child.counter = parent.counter;
  return child;
}

/** A fresh name for an unknown dimension. */
export function unknownDimension(state: GraphState): string {
  state.counter += 1;
  return `?${state.counter}`;
}

export function freshName(state: GraphState, prefix: string): string {
  state.counter += 1;
  return `${prefix}_${state.counter}`;
}

export function registerTensor(state: GraphState, name: string, dtype: TensorDtype, shape: readonly Dimension[]): SymbolicTensor {
  if (state.tensors.has(name)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Graph ${describeValue(state.name)} already has a tensor named ${describeValue(name)}; names must be unique.`,
      details: { name },
    });
  }
  const tensor: SymbolicTensor = Object.freeze({ name, dtype, shape: Object.freeze([...shape]) });
  state.tensors.set(name, tensor);
  return tensor;
}

/** Checks that `tensor` belongs to this graph (guards against mixing builders). */
export function assertOwned(state: GraphState, tensor: SymbolicTensor, role: string): void {
  if (state.tensors.get(tensor?.name) !== tensor) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${role}: ${describeValue(tensor?.name)} is not a tensor of graph ${describeValue(state.name)}.`,
      details: { tensor: tensor?.name },
    });
  }
}

export interface EmitSettings {
  attributes?: Record<string, AttributeValue | SubgraphAttribute>;
  meta?: Record<string, unknown>;
  domain?: string;
}

/** Appends a node whose outputs have the given types; returns the output tensors. */
export function emit(
  state: GraphState,
  opType: string,
  inputs: readonly (SymbolicTensor | undefined)[],
  outputs: readonly { dtype: TensorDtype; shape: readonly Dimension[] }[],
  settings: EmitSettings = {},
): SymbolicTensor[] {
  for (const input of inputs) if (input !== undefined) assertOwned(state, input, opType);
  const name = freshName(state, opType);
  const outputTensors = outputs.map((output, index) =>
    registerTensor(state, outputs.length === 1 ? name : `${name}:${index}`, output.dtype, output.shape),
  );
  const node: GraphNode = {
    opType,
    name,
    domain: settings.domain ?? '',
    inputs: [...inputs],
    outputs: outputTensors,
    attributes: settings.attributes ?? {},
    meta: settings.meta ?? {},
  };
  state.nodes.push(node);
  for (const output of outputTensors) state.producers.set(output.name, node);
  return outputTensors;
}
