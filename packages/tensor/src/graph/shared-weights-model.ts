import { AgentFlowError, describeValue } from '@agentflow/core';
import onnxProto, { type onnx } from 'onnx-proto';
import type { HostTensor, TensorDtype } from '../dtype/dtype';
import { onnxDataTypeCode } from './operators-math';
import { externalWeightInitializers, weightExternalData } from './serialize';
import type { GraphBuilder } from './graph-types';

const protos = onnxProto.onnx;

/** The graph input that selects which graph a run of a {@link SharedWeightsModel} computes. */
export const GRAPH_SELECTOR_INPUT = 'agentflow_graph';

/** A graph input as declared: dimensions are numbers or undefined (symbolic). */
export interface DeclaredInput {
  name: string;
  dtype: TensorDtype;
  dims: (number | undefined)[];
}

/**
 * Several graphs over one set of weights in one ONNX model, so that one ONNX Runtime session
 * holds the weights once (a session copies its initializers to the device; two sessions, two
 * copies). The weights are initializers of the main graph; each graph is the branch of its own
 * `If` node on {@link GRAPH_SELECTOR_INPUT} (an int64 scalar, the graph's index) and reads them
 * from the enclosing scope, so only the selected graph runs.
 *
 * The main graph's inputs are the union of the graphs' inputs (same name, same tensor: a graph
 * that does not use one is fed an empty or fixed-size placeholder); its outputs are every graph's
 * outputs, empty when that graph was not selected.
 */
export interface SharedWeightsModel {
  bytes: Uint8Array;
  /** The `externalData` session option: the shared weights, read in place from their arrays. */
  externalData: { path: string; data: Uint8Array }[];
  /** Every input of the main graph but the selector. */
  inputs: DeclaredInput[];
  /**
   * Per graph (in the order given): its inputs and outputs by name, and the names its outputs
   * have in the model (the same, but prefixed with `g<index>/` where another graph has that name).
   */
  graphs: { inputs: string[]; outputs: string[]; modelOutputs: string[] }[];
  /**
   * Whether the graphs are If branches and runs feed {@link GRAPH_SELECTOR_INPUT}: false for a
   * single graph, which is the model as it is (no If around it).
   */
  branches: boolean;
}

const dtypeByCode = new Map<number, TensorDtype>(
  (['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint64', 'uint32', 'uint16', 'uint8', 'bool'] as const).map(
    (dtype) => [onnxDataTypeCode(dtype), dtype],
  ),
);

function declared(info: onnx.IValueInfoProto): DeclaredInput {
  const tensor = info.type?.tensorType;
  const dtype = dtypeByCode.get(tensor?.elemType ?? -1);
  if (!tensor || !dtype) {
    throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: `Graph input ${describeValue(info.name)} is not a tensor of a known element type.` });
  }
  const dims = (tensor.shape?.dim ?? []).map((dim) => (dim.dimValue === undefined || dim.dimValue === null ? undefined : Number(dim.dimValue)));
  return { name: info.name ?? '', dtype, dims };
}

function valueInfo(input: DeclaredInput): onnx.IValueInfoProto {
  return {
    name: input.name,
    type: { tensorType: { elemType: onnxDataTypeCode(input.dtype), shape: { dim: input.dims.map((dim) => (dim === undefined ? {} : { dimValue: dim })) } } },
  };
}

/** A tensor of `dtype` and unknown shape (If branches may give different shapes). */
function anyShape(name: string, elemType: number): onnx.IValueInfoProto {
  return { name, type: { tensorType: { elemType } } };
}

/** `graph` with every name but `kept` ones prefixed, through nested graphs (Loop bodies) too. */
function renamed(graph: onnx.IGraphProto, rename: (name: string) => string): onnx.IGraphProto {
  const attribute = (value: onnx.IAttributeProto): onnx.IAttributeProto => ({
    ...value,
    ...(value.g ? { g: renamed(value.g, rename) } : {}),
    ...(value.graphs && value.graphs.length > 0 ? { graphs: value.graphs.map((nested) => renamed(nested, rename)) } : {}),
  });
  return {
    ...graph,
    node: (graph.node ?? []).map((node) => ({
      ...node,
      name: node.name ? rename(node.name) : node.name,
      input: (node.input ?? []).map(rename),
      output: (node.output ?? []).map(rename),
      attribute: (node.attribute ?? []).map(attribute),
    })),
    input: (graph.input ?? []).map((info) => ({ ...info, name: rename(info.name ?? '') })),
    output: (graph.output ?? []).map((info) => ({ ...info, name: rename(info.name ?? '') })),
    initializer: (graph.initializer ?? []).map((tensor) => ({ ...tensor, name: rename(tensor.name ?? '') })),
    valueInfo: (graph.valueInfo ?? []).map((info) => ({ ...info, name: rename(info.name ?? '') })),
  };
}

/** The shared weights of `graphs`: the same name must be the same array in every graph. */
function sharedWeights(graphs: readonly GraphBuilder[]): Map<string, HostTensor> {
  const weights = new Map<string, HostTensor>();
  for (const [index, graph] of graphs.entries()) {
    for (const [name, value] of graph.weights()) {
      const known = weights.get(name);
      if (known !== undefined && known.data !== value.data) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Graph ${index} binds weight ${describeValue(name)} to another array than an earlier graph: graphs merged over shared weights must bind each name to the same array.`,
          details: { graph: index, weight: name },
        });
      }
      weights.set(name, value);
    }
  }
  return weights;
}

/** Builds the {@link SharedWeightsModel} of `graphs` (at least one; each may use any subset of the weights). */
export function buildSharedWeightsModel(graphs: readonly GraphBuilder[]): SharedWeightsModel {
  if (graphs.length === 0) throw new AgentFlowError({ code: 'INVALID_ARGUMENT', message: 'buildSharedWeightsModel needs at least one graph.' });
  const weights = sharedWeights(graphs);
  const inputs = new Map<string, DeclaredInput>();
  const opsets = new Map<string, number>();
  const initializers: onnx.ITensorProto[] = [];
  const branches: onnx.IGraphProto[] = [];
  const described: SharedWeightsModel['graphs'] = [];

  for (const [index, graph] of graphs.entries()) {
    const bytes = graph.toBytes({ weights: 'external' });
    const model = protos.ModelProto.decode(bytes);
    if (graphs.length === 1) {
      const outputs = (model.graph?.output ?? []).map((output) => output.name ?? '');
      const own = (model.graph?.input ?? []).map(declared);
      return { bytes, externalData: weightExternalData(weights), inputs: own, graphs: [{ inputs: own.map((input) => input.name), outputs, modelOutputs: outputs }], branches: false };
    }
    for (const opset of model.opsetImport ?? []) opsets.set(opset.domain ?? '', Math.max(Number(opset.version), opsets.get(opset.domain ?? '') ?? 0));
    const own = model.graph!;
    const roleInputs = (own.input ?? []).map(declared);
    for (const input of roleInputs) {
      const known = inputs.get(input.name);
      if (known !== undefined && known.dtype !== input.dtype) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Input ${describeValue(input.name)} is ${known.dtype} in one graph and ${input.dtype} in graph ${index}: graphs sharing one session must agree on their inputs' types.`,
          details: { input: input.name },
        });
      }
      // Where the graphs disagree on a dimension it becomes symbolic.
      const dims = known === undefined ? input.dims : input.dims.length === known.dims.length ? input.dims.map((dim, axis) => (dim === known.dims[axis] ? dim : undefined)) : undefined;
      if (dims === undefined) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `Input ${describeValue(input.name)} has rank ${known!.dims.length} in one graph and ${input.dims.length} in graph ${index}: graphs sharing one session must agree on their inputs' ranks.`,
          details: { input: input.name },
        });
      }
      inputs.set(input.name, { ...input, dims });
    }
    const kept = new Set([...roleInputs.map((input) => input.name), ...weights.keys(), '']);
    const prefix = `g${index}/`;
    const body = renamed({ node: own.node, initializer: own.initializer, output: own.output }, (name) => (kept.has(name) ? name : `${prefix}${name}`));
    // The graph's own small constants go to the main graph (weights are there already).
    for (const tensor of body.initializer ?? []) if (!weights.has(tensor.name ?? '')) initializers.push(tensor);
    const outputs = own.output ?? [];
    branches.push({ name: `${prefix}branch`, node: body.node ?? [], output: body.output ?? [] });
    described.push({ inputs: roleInputs.map((input) => input.name), outputs: outputs.map((output) => output.name ?? ''), modelOutputs: [] });
  }

  // One If per graph, side by side at the top level, so that every branch reads the weights from
  // the main graph itself: nested in another If's branch, ONNX Runtime 1.29 held a second copy of
  // the weights the inner branches read (measured on the CPU). A graph's If runs it when selected
  // and gives empty tensors otherwise. Output names another graph has too are prefixed.
  const counts = new Map<string, number>();
  for (const graph of described) for (const name of graph.outputs) counts.set(name, (counts.get(name) ?? 0) + 1);
  const mainNodes: onnx.INodeProto[] = [];
  const mainOutputs: onnx.IValueInfoProto[] = [];
  branches.forEach((branch, index) => {
    const own = described[index]!;
    own.modelOutputs = own.outputs.map((name) => (counts.get(name) === 1 ? name : `g${index}/${name}`));
    const types = (branch.output ?? []).map((info) => info.type?.tensorType?.elemType ?? 0);
    const then: onnx.IGraphProto = {
      name: `g${index}/then`,
      node: [...(branch.node ?? []), ...(branch.output ?? []).map((info, position): onnx.INodeProto => ({ opType: 'Identity', name: `g${index}/then/${position}`, input: [info.name ?? ''], output: [`g${index}/then/${position}`] }))],
      output: types.map((type, position) => anyShape(`g${index}/then/${position}`, type)),
    };
    const otherwise: onnx.IGraphProto = {
      name: `g${index}/else`,
      node: types.map((type, position): onnx.INodeProto => ({
        opType: 'Constant',
        name: `g${index}/else/${position}`,
        output: [`g${index}/else/${position}`],
        attribute: [{ name: 'value', type: protos.AttributeProto.AttributeType.TENSOR, t: { dims: [0], dataType: type, rawData: new Uint8Array(0) } }],
      })),
      output: types.map((type, position) => anyShape(`g${index}/else/${position}`, type)),
    };
    const condition = `is_graph_${index}`;
    initializers.push({ name: `graph_index_${index}`, dims: [], dataType: onnxDataTypeCode('int64'), int64Data: [index] });
    mainNodes.push(
      { opType: 'Equal', name: `select${index}`, input: [GRAPH_SELECTOR_INPUT, `graph_index_${index}`], output: [condition] },
      {
        opType: 'If',
        name: `graph${index}`,
        input: [condition],
        output: own.modelOutputs,
        attribute: [
          { name: 'then_branch', type: protos.AttributeProto.AttributeType.GRAPH, g: then },
          { name: 'else_branch', type: protos.AttributeProto.AttributeType.GRAPH, g: otherwise },
        ],
      },
    );
    mainOutputs.push(...own.modelOutputs.map((name, position) => anyShape(name, types[position]!)));
  });

  const model: onnx.IModelProto = {
    irVersion: 8,
    producerName: '@agentflow/tensor',
    opsetImport: [...opsets].map(([domain, version]) => ({ domain, version })),
    graph: {
      name: 'shared_weights',
      node: mainNodes,
      input: [valueInfo({ name: GRAPH_SELECTOR_INPUT, dtype: 'int64', dims: [] }), ...[...inputs.values()].map(valueInfo)],
      output: mainOutputs,
      initializer: [...initializers, ...externalWeightInitializers(weights)],
    },
  };
  return {
    bytes: protos.ModelProto.encode(model).finish(),
    externalData: weightExternalData(weights),
    inputs: [...inputs.values()],
    graphs: described,
    branches: true,
  };
}
