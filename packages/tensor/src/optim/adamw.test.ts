import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFlowError } from '@agentflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { adamWStep, createAdamW, loadAdamWState, saveAdamWState } from './adamw';
import type { AdamWState } from './optimizer-types';
import { clipGradientsByGlobalNorm, globalGradientNorm } from './gradient-clipping';
import { learningRateAt } from './schedules';

const directory = mkdtempSync(join(tmpdir(), 'agentflow-adamw-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('AdamW', () => {
  it('first step moves each weight by lr against its gradient sign (bias correction), plus decoupled decay', () => {
    const optimizer = createAdamW({ schedule: { kind: 'constant', learningRate: 0.1 }, weightDecay: 0.5, epsilon: 1e-12 });
    const parameters = { w: Float32Array.of(1, -2, 3) };
    const result = optimizer.step(parameters, { w: Float32Array.of(0.001, -4, 0) });
    // m_hat = g, v_hat = g^2, so the Adam part is lr * sign(g); decay adds lr * wd * p.
    expect(parameters.w[0]).toBeCloseTo(1 - 0.1 * (0.5 * 1 + 1), 5);
    expect(parameters.w[1]).toBeCloseTo(-2 - 0.1 * (0.5 * -2 - 1), 5);
    expect(parameters.w[2]).toBeCloseTo(3 - 0.1 * (0.5 * 3), 5);
    expect(result).toMatchObject({ step: 1, learningRate: 0.1, clipped: false });
    expect(result.gradNorm).toBeCloseTo(Math.hypot(0.001, 4), 5);
  });

  it('skips decay for parameters the filter excludes', () => {
    const optimizer = createAdamW({ schedule: { kind: 'constant', learningRate: 0.1 }, weightDecay: 1, decays: (name) => name !== 'bias' });
    const parameters = { bias: Float32Array.of(2), weight: Float32Array.of(2) };
    optimizer.step(parameters, { bias: Float32Array.of(0), weight: Float32Array.of(0) });
    expect(parameters.bias[0]).toBe(2);
    expect(parameters.weight[0]).toBeCloseTo(1.8, 6);
  });

  it('clips to the global norm and reports it', () => {
    const optimizer = createAdamW({ schedule: { kind: 'constant', learningRate: 0.1 }, maxGradNorm: 1, weightDecay: 0 });
    const gradients = { a: Float32Array.of(3), b: Float32Array.of(4) };
    const result = optimizer.step({ a: Float32Array.of(0), b: Float32Array.of(0) }, gradients);
    expect(result.gradNorm).toBeCloseTo(5, 6);
    expect(result.clipped).toBe(true);
    expect(Array.from(gradients.a)).toEqual([3]); // the caller's gradients stay untouched
  });

  it('refuses non-finite gradients and mismatched names', () => {
    const optimizer = createAdamW({ schedule: { kind: 'constant', learningRate: 0.1 } });
    expect(() => optimizer.step({ w: Float32Array.of(1) }, { w: Float32Array.of(Number.NaN) })).toThrow(/gradient norm is NaN/);
    expect(() => optimizer.step({ w: Float32Array.of(1) }, {})).toThrow(/gradient for "w" is missing/);
  });

  it('saves and restores its state: a resumed run matches an uninterrupted one bit for bit', async () => {
    const settings = { schedule: { kind: 'linear-warmup' as const, learningRate: 0.05, warmupSteps: 3 }, maxGradNorm: 0.5 };
    const gradientAt = (step: number) => ({ w: Float32Array.from({ length: 5 }, (_, i) => Math.sin(step + i)), b: Float32Array.of(step % 3) });
    const straight = createAdamW(settings);
    const straightParameters = { w: new Float32Array(5).fill(0.3), b: Float32Array.of(1) };
    for (let step = 0; step < 8; step++) straight.step(straightParameters, gradientAt(step));

    const first = createAdamW(settings);
    const parameters = { w: new Float32Array(5).fill(0.3), b: Float32Array.of(1) };
    for (let step = 0; step < 4; step++) first.step(parameters, gradientAt(step));
    await first.save(directory);
    const resumed = createAdamW(settings);
    await resumed.load(directory);
    expect(resumed.getState().step).toBe(4);
    for (let step = 4; step < 8; step++) resumed.step(parameters, gradientAt(step));
    expect(Array.from(parameters.w)).toEqual(Array.from(straightParameters.w));
    expect(Array.from(parameters.b)).toEqual(Array.from(straightParameters.b));
  });

  it('adamWStep on a state the caller keeps matches createAdamW bit for bit, updating that state in place', () => {
    const settings = { weightDecay: 0.1, maxGradNorm: 0.5, decays: (name: string) => name !== 'b' };
    const optimizer = createAdamW({ schedule: { kind: 'constant', learningRate: 0.05 }, ...settings });
    const gradientAt = (step: number) => ({ w: Float32Array.from({ length: 7 }, (_, i) => Math.cos(step * 3 + i) * 10 ** (i - 4)), b: Float32Array.of(step - 2) });
    const viaOptimizer = { w: Float32Array.from({ length: 7 }, (_, i) => i / 7 - 0.5), b: Float32Array.of(1) };
    const viaStep = { w: viaOptimizer.w.slice(), b: viaOptimizer.b.slice() };
    const state: AdamWState = { step: 0, moments: {} };
    for (let step = 0; step < 6; step++) {
      const expected = optimizer.step(viaOptimizer, gradientAt(step));
      expect(adamWStep(state, viaStep, gradientAt(step), { ...settings, learningRate: 0.05 })).toEqual(expected);
    }
    expect(Array.from(viaStep.w)).toEqual(Array.from(viaOptimizer.w));
    expect(Array.from(viaStep.b)).toEqual(Array.from(viaOptimizer.b));
    const moments = state.moments.w!;
    adamWStep(state, viaStep, gradientAt(6), { ...settings, learningRate: 0.05 });
    // The same moment arrays, one step further: nothing was copied.
    expect(state.moments.w).toBe(moments);
    expect(state.step).toBe(7);
    expect(() => adamWStep(state, viaStep, gradientAt(7), { learningRate: -1 })).toThrow(/learning rate must be >= 0, got -1/);
  });

  it('saveAdamWState / loadAdamWState: a kept state saved and read back continues as createAdamW.load does', async () => {
    const settings = { schedule: { kind: 'constant' as const, learningRate: 0.05 }, weightDecay: 0.1 };
    const gradientAt = (step: number) => ({ w: Float32Array.from({ length: 4 }, (_, i) => Math.sin(step + i)) });
    const state: AdamWState = { step: 0, moments: {} };
    const parameters = { w: Float32Array.of(0.5, -0.5, 1, 0) };
    for (let step = 0; step < 3; step++) adamWStep(state, parameters, gradientAt(step), { ...settings, learningRate: 0.05 });
    const folder = mkdtempSync(join(directory, 'kept-'));
    await saveAdamWState(folder, state, settings);
    const loaded = await loadAdamWState(folder);
    expect(loaded.step).toBe(3);
    expect(Array.from(loaded.moments.w!.v)).toEqual(Array.from(state.moments.w!.v));
    const optimizer = createAdamW(settings);
    await optimizer.load(folder);
    const viaOptimizer = { w: parameters.w.slice() };
    optimizer.step(viaOptimizer, gradientAt(3));
    adamWStep(loaded, parameters, gradientAt(3), { ...settings, learningRate: 0.05 });
    expect(Array.from(parameters.w)).toEqual(Array.from(viaOptimizer.w));
  });

  it('reports a missing checkpoint as CHECKPOINT_ERROR', async () => {
    const optimizer = createAdamW({ schedule: { kind: 'constant', learningRate: 0.1 } });
    await expect(optimizer.load(join(directory, 'nowhere'))).rejects.toSatisfy((error) => AgentFlowError.hasCode(error, 'CHECKPOINT_ERROR'));
  });
});

describe('schedules and clipping', () => {
  it('constant, linear warm-up and cosine follow their formulas', () => {
    expect(learningRateAt({ kind: 'constant', learningRate: 0.3 }, 99)).toBe(0.3);
    const warmup = { kind: 'linear-warmup' as const, learningRate: 1, warmupSteps: 4 };
    expect([0, 1, 2, 3, 10].map((step) => learningRateAt(warmup, step))).toEqual([0.25, 0.5, 0.75, 1, 1]);
    const cosine = { kind: 'cosine' as const, learningRate: 1, warmupSteps: 2, totalSteps: 12, minLearningRate: 0.1 };
    expect(learningRateAt(cosine, 0)).toBe(0.5);
    expect(learningRateAt(cosine, 2)).toBe(1);
    expect(learningRateAt(cosine, 7)).toBeCloseTo(0.55, 10); // halfway: midpoint of 1 and 0.1
    expect(learningRateAt(cosine, 12)).toBeCloseTo(0.1, 10);
    expect(learningRateAt(cosine, 50)).toBeCloseTo(0.1, 10);
  });

  it('rejects an invalid schedule at construction', () => {
    expect(() => createAdamW({ schedule: { kind: 'cosine', learningRate: 1, warmupSteps: 5, totalSteps: 5 } })).toThrow(/totalSteps/);
  });

  it('clips gradients in place to the requested norm', () => {
    const gradients = { a: Float32Array.of(3, 0), b: Float32Array.of(4) };
    const { norm, scale } = clipGradientsByGlobalNorm(gradients, 2.5);
    expect(norm).toBeCloseTo(5, 6);
    expect(scale).toBeCloseTo(0.5, 6);
    expect(globalGradientNorm(gradients)).toBeCloseTo(2.5, 5);
    expect(clipGradientsByGlobalNorm(gradients, 10).scale).toBe(1);
  });
});
