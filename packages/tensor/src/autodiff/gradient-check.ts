import { createRandom } from '@agentflow/core';
import { type HostTensor, type TensorDtype, createHostTensor, shapeSize } from '../dtype/dtype';
import { createGraphBuilder } from '../graph/graph-builder';
import type { GraphBuilder, SymbolicTensor } from '../graph/graph-types';
import type { TensorRuntime } from '../runtime/runtime-types';

/** One differentiable input of a gradient check: its shape and how to draw its values. */
export interface CheckedInput {
  shape: number[];
  /** Value range, default [-1, 1]. */
  range?: [number, number];
  /** Symbolic shape to declare (default: the numeric shape). */
  declared?: (number | string)[];
}

export interface GradientCheckSettings {
  dtype: 'float64' | 'float32';
  inputs: Record<string, CheckedInput>;
  /** Builds the function under test from the declared inputs (same order as `inputs`). */
  build: (g: GraphBuilder, inputs: SymbolicTensor[]) => SymbolicTensor;
  seed?: number;
  /** Runtime shape of the output when it has symbolic dimensions. */
  outputShape?: number[];
}

export interface GradientCheckResult {
  /** Largest |analytic - numeric| / (absoluteTolerance + |numeric|)-style error over all elements. */
  worstError: number;
  analytic: Record<string, number[]>;
  numeric: Record<string, number[]>;
}

/**
 * Compares the engine's gradients of sum(f(inputs) * r) (r a fixed random weighting, so
 * non-scalar outputs are checked in every direction) with central finite differences run
 * through the same ONNX Runtime session.
 */
export async function checkGradient(runtime: TensorRuntime, settings: GradientCheckSettings): Promise<GradientCheckResult> {
  const random = createRandom(settings.seed ?? 7);
  const { dtype } = settings;
  const g = createGraphBuilder({ name: 'gradient-check' });
  const names = Object.keys(settings.inputs);
  const declared = names.map((name) => {
    const input = settings.inputs[name]!;
    return g.input(name, dtype, input.declared ?? input.shape);
  });
  const y = settings.build(g, declared);
  const outputShape = settings.outputShape ?? (y.shape as number[]);
  const weightValues = Array.from({ length: numericSize(outputShape) }, () => 0.5 + random.next());
  const weights = g.constant(createHostTensor(dtype as TensorDtype, outputShape, weightValues));
  const loss = g.reduceSum(g.mul(y, weights), [...y.shape.keys()], false);
  const gradients = g.gradients(loss, declared);
  g.output(loss, 'loss');
  gradients.forEach((gradient, index) => {
    g.output(gradient, `grad.${names[index]}`);
  });
  const session = await runtime.createSession(g.toBytes(), { name: 'gradient-check' });
  const feeds: Record<string, HostTensor> = {};
  for (const name of names) {
    const input = settings.inputs[name]!;
    const [low, high] = input.range ?? [-1, 1];
    feeds[name] = createHostTensor(dtype, input.shape, Array.from({ length: shapeSize(input.shape) }, () => low + (high - low) * random.next()));
  }
  const result = await session.run(feeds);
  const step = dtype === 'float64' ? 1e-6 : 1e-2;
  const analytic: Record<string, number[]> = {};
  const numeric: Record<string, number[]> = {};
  let worstError = 0;
  for (const name of names) {
    analytic[name] = Array.from(result[`grad.${name}`]!.data as Float64Array);
    numeric[name] = [];
    const values = feeds[name]!.data as Float64Array;
    for (let i = 0; i < values.length; i++) {
      const original = values[i]!;
      values[i] = original + step;
      const plus = Number((await session.run(feeds, ['loss'])).loss!.data[0]);
      values[i] = original - step;
      const minus = Number((await session.run(feeds, ['loss'])).loss!.data[0]);
      values[i] = original;
      const estimate = (plus - minus) / (2 * step);
      numeric[name].push(estimate);
      const scale = dtype === 'float64' ? 1e-6 + 1e-6 * Math.abs(estimate) : 2e-2 + 2e-2 * Math.abs(estimate);
      worstError = Math.max(worstError, Math.abs(analytic[name]![i]! - estimate) / scale);
    }
  }
  await session.release();
  return { worstError, analytic, numeric };
}

function numericSize(shape: readonly (number | string)[]): number {
  let size = 1;
  for (const dim of shape) {
    if (typeof dim !== 'number') throw new Error(`gradient check needs a static output shape, got ${JSON.stringify(shape)}`);
    size *= dim;
  }
  return size;
}
