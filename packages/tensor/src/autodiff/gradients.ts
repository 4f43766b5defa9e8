import { AgentFlowError, describeValue } from '@agentflow/core';
import { isFloatDtype } from '../dtype/dtype';
import { type GraphState, assertOwned } from '../graph/graph-state';
import type { GradientSettings, GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import { sumAll, zerosLike } from './gradient-helpers';
import { gradientRules } from './gradient-rules';
import { planRecompute } from './recompute';

function requireFloat(tensor: SymbolicTensor, role: string): void {
  if (!isFloatDtype(tensor.dtype)) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `gradients: ${role} ${describeValue(tensor.name)} is ${tensor.dtype}; only floating-point tensors have gradients.`,
      details: { tensor: tensor.name, dtype: tensor.dtype },
    });
  }
}

/**
 * Reverse-mode autodiff as a graph transformation: appends, in reverse topological order,
 * the gradient nodes of every node that lies on a path from one of `wrt` to `output`.
 */
export function buildGradients(
  state: GraphState,
  g: GraphBuilder,
  output: SymbolicTensor,
  wrt: readonly SymbolicTensor[],
  settings: GradientSettings,
): SymbolicTensor[] {
  assertOwned(state, output, 'gradients output');
  requireFloat(output, 'output');
  for (const tensor of wrt) {
    assertOwned(state, tensor, 'gradients wrt');
    requireFloat(tensor, 'wrt');
  }
  if (settings.seed === undefined && output.shape.length !== 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `gradients: output ${describeValue(output.name)} has shape ${describeValue(output.shape)}; pass a scalar (reduce it first) or settings.seed.`,
      details: { shape: output.shape },
    });
  }
  const producer = state.producers.get(output.name);
  const lastIndex = producer === undefined ? -1 : state.nodes.indexOf(producer);
  const nodes = state.nodes.slice(0, lastIndex + 1);

  // Forward: float tensors that depend on some wrt tensor.
  const dependent = new Set(wrt.map((tensor) => tensor.name));
  for (const node of nodes) {
    if (node.inputs.some((x) => x !== undefined && dependent.has(x.name))) {
      for (const y of node.outputs) if (isFloatDtype(y.dtype)) dependent.add(y.name);
    }
  }
  // Backward: tensors the output depends on.
  const reaches = new Set([output.name]);
  for (let index = nodes.length - 1; index >= 0; index--) {
    const node = nodes[index]!;
    if (node.outputs.some((y) => reaches.has(y.name))) for (const x of node.inputs) if (x !== undefined) reaches.add(x.name);
  }
  const onPath = (name: string) => dependent.has(name) && reaches.has(name);

  const contributions = new Map<string, SymbolicTensor[]>();
  const contribute = (name: string, gradient: SymbolicTensor) => {
    const list = contributions.get(name);
    if (list === undefined) contributions.set(name, [gradient]);
    else list.push(gradient);
  };
  const gradientOf = (name: string): SymbolicTensor | undefined => {
    const list = contributions.get(name);
    if (list === undefined || list.length === 0) return undefined;
    // Fan-out: a tensor used several times sums the gradients of its uses.
    const total = sumAll(g, list);
    contributions.set(name, [total]);
    return total;
  };
  contribute(output.name, settings.seed ?? g.constant(1, output.dtype));
  const recompute = settings.recompute && settings.recompute.length > 1 ? planRecompute(state, g, nodes, settings.recompute) : undefined;

  for (let index = nodes.length - 1; index >= 0; index--) {
    const node = nodes[index]!;
    const needs = node.inputs.map((x) => x !== undefined && onPath(x.name));
    if (!needs.some(Boolean) || !node.outputs.some((y) => onPath(y.name))) continue;
    const outputGradients = node.outputs.map((y) => gradientOf(y.name));
    if (outputGradients.every((gradient) => gradient === undefined)) continue;
    const rule = gradientRules[node.domain === '' ? node.opType : `${node.domain}.${node.opType}`];
    if (rule === undefined) {
      throw new AgentFlowError({
        code: 'UNSUPPORTED_OPERATOR',
        message: `No gradient rule for ONNX operator ${node.opType} (node ${node.name}), which lies between ${describeValue(wrt.map((t) => t.name))} and ${describeValue(output.name)}. Supported: ${Object.keys(gradientRules).join(', ')}.`,
        details: { opType: node.opType, node: node.name },
      });
    }
    const seen = recompute ? recompute.remapped(node, index, gradientOf) : node;
    const inputGradients = rule({ g, node: seen, outputGradients, needs });
    node.inputs.forEach((x, inputIndex) => {
      const gradient = inputGradients[inputIndex];
      if (x !== undefined && needs[inputIndex] && gradient !== undefined) contribute(x.name, gradient);
    });
  }
  return wrt.map((tensor) => gradientOf(tensor.name) ?? zerosLike(g, tensor));
}
