import { AgentFlowError, describeValue } from '@agentflow/core';
import { toFloat32 } from '../dtype/dtype';
import { buildGradients } from '../autodiff/gradients';
import { blockedAttention } from '../attention/blocked-attention';
import { rowBlocked } from '../blocking/row-blocked';
import { createChildState, createGraphState, emit, type GraphState, registerTensor, assertOwned } from './graph-state';
import { lowerComposites } from './lower-composites';
import type { GraphBuilder, SymbolicTensor } from './graph-types';
import { constantOf, createMathOperators } from './operators-math';
import { createShapeOperators } from './operators-shape';
import { initializerBytes, saveModel, serializeInline, weightBytes } from './serialize';

/** Settings for {@link createGraphBuilder}. */
export interface GraphBuilderSettings {
  /** The ONNX graph name, default 'agentflow'. */
  name?: string;
}

function checkDeclaredName(name: string, role: string): void {
  if (typeof name !== 'string' || name.length === 0) {
    throw new AgentFlowError({
      code: 'INVALID_ARGUMENT',
      message: `${role} name must be a non-empty string, got ${describeValue(name)}.`,
      details: { name },
    });
  }
}

/** Creates an empty ONNX graph builder (opset 17). See {@link GraphBuilder}. */
export function createGraphBuilder(settings: GraphBuilderSettings = {}): GraphBuilder {
  return builderOver(createGraphState(settings.name ?? 'agentflow'));
}

/** A builder that adds to `state` (a graph's own, or a child state of a composite's lowering). */
function builderOver(state: GraphState): GraphBuilder {
  const builder: GraphBuilder = {
    ...createMathOperators(state),
    ...createShapeOperators(state),
    input(name, dtype, shape) {
      checkDeclaredName(name, 'Input');
      const tensor = registerTensor(state, name, dtype, shape);
      state.inputs.push(tensor);
      return tensor;
    },
    initializer(name, value, initializerSettings = {}) {
      checkDeclaredName(name, 'Initializer');
      const stored =
        !initializerSettings.keepDtype && (value.dtype === 'float16' || value.dtype === 'bfloat16') ? toFloat32(value) : value;
      const tensor = registerTensor(state, name, stored.dtype, stored.shape);
      state.initializers.set(name, { tensor, value: stored });
      return tensor;
    },
    weight(name, value) {
      checkDeclaredName(name, 'Weight');
      const tensor = registerTensor(state, name, value.dtype, value.shape);
      state.weights.set(name, { tensor, value });
      return tensor;
    },
    weights: () => new Map([...state.weights].map(([name, { value }]) => [name, value])),
    constant(value, dtype = 'float32') {
      if (typeof value === 'number') return constantOf(state, [value], dtype, []);
      const [tensor] = emit(state, 'Constant', [], [{ dtype: value.dtype, shape: value.shape }], { attributes: { value } });
      state.constantValues.set(tensor!.name, value);
      return tensor!;
    },
    output(tensor, name) {
      assertOwned(state, tensor, 'output');
      let result: SymbolicTensor = tensor;
      if (name !== undefined && name !== tensor.name) {
        checkDeclaredName(name, 'Output');
        const [renamed] = emit(state, 'Identity', [tensor], [{ dtype: tensor.dtype, shape: tensor.shape }]);
        // Re-register under the requested name so sessions fetch it by that name.
        state.tensors.delete(renamed!.name);
        const node = state.nodes[state.nodes.length - 1]!;
        state.producers.delete(renamed!.name);
        result = registerTensor(state, name, tensor.dtype, tensor.shape);
        node.outputs = [result];
        state.producers.set(name, node);
      }
      if (!state.outputs.includes(result)) state.outputs.push(result);
      return result;
    },
    op(opType, inputs, operatorSettings = {}) {
      const first = inputs.find((input) => input !== undefined);
      const outputs = operatorSettings.outputs ?? (first ? [{ dtype: first.dtype, shape: first.shape }] : []);
      if (outputs.length === 0) {
        throw new AgentFlowError({
          code: 'INVALID_ARGUMENT',
          message: `op(${describeValue(opType)}): give settings.outputs when the operator has no tensor inputs.`,
          details: { opType },
        });
      }
      return emit(state, opType, inputs, outputs, {
        attributes: operatorSettings.attributes ?? {},
        ...(operatorSettings.domain === undefined ? {} : { domain: operatorSettings.domain }),
        ...(operatorSettings.meta === undefined ? {} : { meta: operatorSettings.meta }),
      });
    },
    gradients(output, wrt, gradientSettings = {}) {
      return buildGradients(state, builder, output, wrt, gradientSettings);
    },
    blockedAttention(query, key, value, attentionSettings) {
      return blockedAttention(builder, query, key, value, attentionSettings);
    },
    rowBlocked(rows, parameters, rowFunction, rowSettings) {
      const scratch = createChildState(state, 'row_function');
      const outputs = rowBlocked(builder, builderOver(scratch), rows, parameters, rowFunction, rowSettings);
      state.counter = Math.max(state.counter, scratch.counter); // the scratch's unknown dimensions keep their own names
      return outputs;
    },
    toBytes: (serializeSettings = {}) => serializeInline(lowerComposites(state, builderOver), serializeSettings.weights ?? 'inputs'),
    save: (path, saveSettings = {}) => saveModel(lowerComposites(state, builderOver), path, saveSettings.externalData ?? 'auto'),
    summary: () => ({
      nodes: state.nodes.length,
      inputs: state.inputs.length,
      outputs: state.outputs.length,
      initializers: state.initializers.size,
      initializerBytes: initializerBytes(state),
      weights: state.weights.size,
      weightBytes: weightBytes(state),
    }),
  };
  return builder;
}
