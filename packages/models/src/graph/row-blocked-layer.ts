import type { GraphBuilder, SymbolicTensor } from '@agentflow/tensor';
import { biasedModules, hasQueryKeyNorm } from '../config/decoder-architecture';
import type { DecoderConfig } from '../config/decoder-config';
import { type LinearModule, linearPath } from '../weights/weight-names';
import type { LoraTensors } from './decoder-graph';
import type { WeightInitializers } from './graph-weights';
import { rmsNorm, rotateHalf } from './layer-math';

/*
 * A decoder layer's row-wise parts over blocks of rows (GraphBuilder.rowBlocked): the norms,
 * the q/k/v projections with their norms and RoPE before attention, and the output projection,
 * the residuals and the MLP after it. Only one block's intermediate tensors (the MLP's three
 * intermediate-wide tensors, q, k, v and their rotated copies) and, in the backward, their
 * gradients exist at a time, so a long row's recomputed layer costs a block's worth of them.
 * The same values as decoder-graph's unblocked layer within float32 rounding.
 */

/** Rows per block of a layer's row-wise parts (DecoderSettings.rowBlocks). */
export interface RowBlockSettings {
  blockSize: number;
}

/** What one layer's blocked parts read. */
export interface BlockedLayerContext {
  graph: GraphBuilder;
  config: DecoderConfig;
  weights: WeightInitializers;
  lora: ReadonlyMap<string, LoraTensors> | undefined;
  layer: number;
  blockSize: number;
}

type Named = Record<string, SymbolicTensor>;

/**
 * rowBlocked with named parameters: the function reads `parameters` by the same names. Weights
 * are passed as stored (a half-precision matrix is cast per block, inside the loop).
 */
function blockedRows(context: BlockedLayerContext, rows: SymbolicTensor[], parameters: Named, rowFunction: (body: GraphBuilder, rows: SymbolicTensor[], parameters: Named) => SymbolicTensor[]) {
  const names = Object.keys(parameters);
  return context.graph.rowBlocked(
    rows,
    names.map((name) => parameters[name]!),
    (body, blockRows, tensors) => rowFunction(body, blockRows, Object.fromEntries(names.map((name, index) => [name, tensors[index]!]))),
    { blockSize: context.blockSize },
  );
}

/** The parameters of one linear module: `{module}.weight`, `.bias` when biased, `.A`/`.B` when LoRA wraps it. */
function linearParameters(context: BlockedLayerContext, module: LinearModule): Named {
  const path = linearPath(context.layer, module);
  const named: Named = { [`${module}.weight`]: context.weights.plain(`${path}.weight`) };
  if (biasedModules(context.config).includes(module)) named[`${module}.bias`] = context.weights.plain(`${path}.bias`);
  const adapter = context.lora?.get(path);
  if (adapter) Object.assign(named, { [`${module}.A`]: adapter.a, [`${module}.B`]: adapter.b });
  return named;
}

/** x W^T (+ bias) (+ scale (x A^T) B^T), as decoder-graph's linear computes it. */
function linear(context: BlockedLayerContext, body: GraphBuilder, x: SymbolicTensor, parameters: Named, module: LinearModule): SymbolicTensor {
  const weight = parameters[`${module}.weight`]!;
  let y = body.matmulTransposed(x, weight.dtype === 'float32' ? weight : body.cast(weight, 'float32')); // weight [out, in]
  const bias = parameters[`${module}.bias`];
  if (bias) y = body.add(y, bias);
  const a = parameters[`${module}.A`];
  if (a) {
    const low = body.matmul(x, body.transpose(a)); // [..., rank]
    y = body.add(y, body.mul(body.matmul(low, body.transpose(parameters[`${module}.B`]!)), context.lora!.get(linearPath(context.layer, module))!.scale));
  }
  return y;
}

/**
 * The attention inputs of one layer: q, k and v, [batch, sequence, heads, headDim] (rows
 * first), q and k normed (Qwen3) and rotated. `cos` and `sin` are the RoPE tables as
 * [batch, sequence, 1, headDim].
 */
export function blockedProjections(context: BlockedLayerContext, hidden: SymbolicTensor, cos: SymbolicTensor, sin: SymbolicTensor) {
  const { config, weights, layer } = context;
  const { headDim, numAttentionHeads, numKeyValueHeads, rmsNormEps } = config;
  const prefix = `model.layers.${layer}`;
  const parameters: Named = {
    input_layernorm: weights.plain(`${prefix}.input_layernorm.weight`),
    ...linearParameters(context, 'q_proj'),
    ...linearParameters(context, 'k_proj'),
    ...linearParameters(context, 'v_proj'),
  };
  if (hasQueryKeyNorm(config)) {
    parameters.q_norm = weights.plain(`${prefix}.self_attn.q_norm.weight`);
    parameters.k_norm = weights.plain(`${prefix}.self_attn.k_norm.weight`);
  }
  const [query, key, value] = blockedRows(context, [hidden, cos, sin], parameters, (body, [rows, cosRows, sinRows], p) => {
    const x = rmsNorm(body, rows!, p.input_layernorm!, rmsNormEps);
    const heads = (y: SymbolicTensor, count: number, norm: SymbolicTensor | undefined) => {
      const split = body.reshape(y, [0, 0, count, headDim]); // [batch, rows, count, headDim]
      return norm ? rmsNorm(body, split, norm, rmsNormEps) : split;
    };
    const rope = (y: SymbolicTensor) => body.add(body.mul(y, cosRows!), body.mul(rotateHalf(body, y, headDim), sinRows!));
    return [
      rope(heads(linear(context, body, x, p, 'q_proj'), numAttentionHeads, p.q_norm)),
      rope(heads(linear(context, body, x, p, 'k_proj'), numKeyValueHeads, p.k_norm)),
      heads(linear(context, body, x, p, 'v_proj'), numKeyValueHeads, undefined),
    ];
  }) as [SymbolicTensor, SymbolicTensor, SymbolicTensor];
  return { query, key, value };
}

/** The layer's output: h = hidden + o_proj(merged), then h + down(SiLU(gate(y)) * up(y)) with y = norm(h). */
export function blockedOutput(context: BlockedLayerContext, hidden: SymbolicTensor, merged: SymbolicTensor): SymbolicTensor {
  const prefix = `model.layers.${context.layer}`;
  const parameters: Named = {
    post_attention_layernorm: context.weights.plain(`${prefix}.post_attention_layernorm.weight`),
    ...linearParameters(context, 'o_proj'),
    ...linearParameters(context, 'gate_proj'),
    ...linearParameters(context, 'up_proj'),
    ...linearParameters(context, 'down_proj'),
  };
  const [output] = blockedRows(context, [hidden, merged], parameters, (body, [rows, attended], p) => {
    const h = body.add(rows!, linear(context, body, attended!, p, 'o_proj'));
    const y = rmsNorm(body, h, p.post_attention_layernorm!, context.config.rmsNormEps);
    const gate = linear(context, body, y, p, 'gate_proj');
    const activated = body.mul(body.mul(gate, body.sigmoid(gate)), linear(context, body, y, p, 'up_proj')); // SiLU(gate) * up
    return [body.add(h, linear(context, body, activated, p, 'down_proj'))];
  });
  return output!;
}
