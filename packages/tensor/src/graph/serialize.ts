import { mkdir, open, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import onnxProto, { type onnx } from 'onnx-proto';
import type { HostTensor } from '../dtype/dtype';
import type { GraphNode, GraphState, SubgraphAttribute } from './graph-state';
import { type AttributeValue, type Dimension, ONNX_OPSET, type SymbolicTensor } from './graph-types';
import { writeAllBytes } from '../safetensors/write-chunks';
import { onnxDataTypeCode } from './operators-math';

const protos = onnxProto.onnx;

// protobuf refuses messages over 2 GB; keep a margin for the graph itself.
const inlineLimitBytes = 1.8 * 1024 ** 3;
// ORT memory-maps external data; page-aligned offsets keep that possible.
const externalAlignment = 4096;

function bytesOf(tensor: HostTensor): Uint8Array {
  return new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
}

function tensorProto(name: string, tensor: HostTensor): onnx.ITensorProto {
  return { name, dims: tensor.shape, dataType: onnxDataTypeCode(tensor.dtype), rawData: bytesOf(tensor) };
}

function isHostTensor(value: AttributeValue): value is HostTensor {
  return typeof value === 'object' && value !== null && 'dtype' in value && 'data' in value;
}

function attributeProto(name: string, value: AttributeValue | SubgraphAttribute): onnx.IAttributeProto {
  const types = protos.AttributeProto.AttributeType;
  if (typeof value === 'object' && value !== null && 'subgraph' in value) return { name, type: types.GRAPH, g: subgraphProto(value.subgraph) };
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { name, type: types.INT, i: value } : { name, type: types.FLOAT, f: value };
  }
  if (typeof value === 'string') return { name, type: types.STRING, s: new TextEncoder().encode(value) };
  if (Array.isArray(value)) {
    return value.every((entry) => Number.isInteger(entry))
      ? { name, type: types.INTS, ints: value }
      : { name, type: types.FLOATS, floats: value };
  }
  if (isHostTensor(value)) return { name, type: types.TENSOR, t: tensorProto('', value) };
  if ('floats' in value) return { name, type: types.FLOATS, floats: value.floats };
  return { name, type: types.FLOAT, f: value.float };
}

function dimensionProto(dim: Dimension): onnx.TensorShapeProto.IDimension {
  if (typeof dim === 'number') return { dimValue: dim };
  // Inferred-unknown dimensions stay anonymous so ONNX Runtime does not tie them together.
  return dim.startsWith('?') ? {} : { dimParam: dim };
}

function valueInfo(tensor: SymbolicTensor, name = tensor.name): onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: { elemType: onnxDataTypeCode(tensor.dtype), shape: { dim: tensor.shape.map(dimensionProto) } },
    },
  };
}

/** Total bytes of the graph's initializers. */
export function initializerBytes(state: GraphState): number {
  let total = 0;
  for (const { value } of state.initializers.values()) total += value.data.byteLength;
  return total;
}

/** The external-data location ONNX Runtime is given for weight `index` (see {@link weightExternalData}). */
const weightLocation = (index: number) => `agentflow-weight-${index}.bin`;

/**
 * The `externalData` session option for a model serialised with `weights: 'external'`: one
 * in-memory "file" per weight, in declaration order (`weights` as GraphBuilder.weights returns it).
 */
export function weightExternalData(weights: ReadonlyMap<string, HostTensor>): { path: string; data: Uint8Array }[] {
  return [...weights.values()].map((value, index) => ({ path: weightLocation(index), data: bytesOf(value) }));
}

/**
 * The initializers of a model serialised with `weights: 'external'`: each weight's bytes are
 * ONNX Runtime's in-memory "file" number `index` ({@link weightExternalData}, in the same order).
 */
export function externalWeightInitializers(weights: ReadonlyMap<string, HostTensor>): onnx.ITensorProto[] {
  return [...weights].map(([name, value], index) => ({
    name,
    dims: value.shape,
    dataType: onnxDataTypeCode(value.dtype),
    dataLocation: protos.TensorProto.DataLocation.EXTERNAL,
    externalData: [
      { key: 'location', value: weightLocation(index) },
      { key: 'offset', value: '0' },
      { key: 'length', value: String(value.data.byteLength) },
    ],
  }));
}

function weightProtos(state: GraphState, mode: 'inputs' | 'external'): { inputs: onnx.IValueInfoProto[]; initializers: onnx.ITensorProto[] } {
  if (mode === 'inputs') return { inputs: [...state.weights.values()].map(({ tensor }) => valueInfo(tensor)), initializers: [] };
  return { inputs: [], initializers: externalWeightInitializers(new Map([...state.weights].map(([name, { value }]) => [name, value]))) };
}

function nodeProto(node: GraphNode): onnx.INodeProto {
  return {
    name: node.name,
    opType: node.opType,
    domain: node.domain,
    input: node.inputs.map((input) => input?.name ?? ''),
    output: node.outputs.map((output) => output.name),
    attribute: Object.entries(node.attributes).map(([name, value]) => attributeProto(name, value)),
  };
}

/** A graph attribute: its nodes, and inputs and outputs as declared (it reads enclosing tensors by name). */
function subgraphProto(state: GraphState): onnx.IGraphProto {
  return {
    name: state.name,
    node: state.nodes.map(nodeProto),
    input: state.inputs.map((input) => valueInfo(input)),
    output: state.outputs.map((output) => valueInfo(output)),
  };
}

/** The operator domains of `nodes` and of the subgraphs in their attributes. */
function domainsOf(nodes: readonly GraphNode[], into = new Set<string>()): Set<string> {
  for (const node of nodes) {
    if (node.domain !== '') into.add(node.domain);
    for (const value of Object.values(node.attributes)) {
      if (typeof value === 'object' && value !== null && 'subgraph' in value) domainsOf(value.subgraph.nodes, into);
    }
  }
  return into;
}

function modelProto(state: GraphState, initializers: onnx.ITensorProto[], weightMode: 'inputs' | 'external' = 'inputs'): onnx.IModelProto {
  const weights = weightProtos(state, weightMode);
  const domains = domainsOf(state.nodes);
  return {
    irVersion: 8,
    producerName: '@agentflow/tensor',
    opsetImport: [{ domain: '', version: ONNX_OPSET }, ...[...domains].map((domain) => ({ domain, version: 1 }))],
    graph: {
      name: state.name,
      node: state.nodes.map(nodeProto),
      input: [...state.inputs.map((input) => valueInfo(input)), ...weights.inputs],
      output: state.outputs.map((output) => valueInfo(output)),
      initializer: [...initializers, ...weights.initializers],
    },
  };
}

/** Bytes of the graph's weights (bound to sessions, never inside the model). */
export function weightBytes(state: GraphState): number {
  let total = 0;
  for (const { value } of state.weights.values()) total += value.data.byteLength;
  return total;
}

/** Serialises with initializers inline and weights as inputs or external data; refuses models protobuf cannot hold. */
export function serializeInline(state: GraphState, weightMode: 'inputs' | 'external' = 'inputs'): Uint8Array {
  const total = initializerBytes(state);
  if (total > inlineLimitBytes) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `Graph ${state.name} has ${(total / 1024 ** 3).toFixed(2)} GB of initializers, over protobuf's 2 GB limit: use save(path) with external data.`,
      details: { initializerBytes: total },
    });
  }
  const initializers = [...state.initializers.entries()].map(([name, { value }]) => tensorProto(name, value));
  return protos.ModelProto.encode(modelProto(state, initializers, weightMode)).finish();
}

/** Writes the model file, and with external data the `<path>.data` file that its initializers point into. */
export async function saveModel(state: GraphState, path: string, externalData: boolean | 'auto'): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const useExternal = externalData === 'auto' ? initializerBytes(state) > inlineLimitBytes : externalData;
  if (!useExternal) {
    await writeFile(path, serializeInline(state));
    return;
  }
  const dataPath = `${path}.data`;
  const location = basename(dataPath);
  const handle = await open(dataPath, 'w');
  const initializers: onnx.ITensorProto[] = [];
  try {
    let offset = 0;
    for (const [name, { value }] of state.initializers) {
      const padding = (externalAlignment - (offset % externalAlignment)) % externalAlignment;
      if (padding > 0) await handle.write(new Uint8Array(padding), 0, padding, offset);
      offset += padding;
      const bytes = bytesOf(value);
      await writeAllBytes(handle, bytes, offset);
      initializers.push({
        name,
        dims: value.shape,
        dataType: onnxDataTypeCode(value.dtype),
        dataLocation: protos.TensorProto.DataLocation.EXTERNAL,
        externalData: [
          { key: 'location', value: location },
          { key: 'offset', value: String(offset) },
          { key: 'length', value: String(bytes.length) },
        ],
      });
      offset += bytes.length;
    }
  } finally {
    await handle.close();
  }
  await writeFile(path, protos.ModelProto.encode(modelProto(state, initializers)).finish());
}
