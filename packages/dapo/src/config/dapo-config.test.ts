import { AgentFlowError } from '@agentflow/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dapoConfigSchema, parseDapoConfig } from './dapo-config';

describe('dapoConfigSchema', () => {
  it('fills the cited defaults', () => {
    const config = parseDapoConfig({});
    expect(config).toMatchObject({
      groupSize: 16,
      promptsPerBatch: 512,
      promptsPerMiniBatch: 32,
      epsLow: 0.2,
      epsHigh: 0.28,
      learningRate: 1e-6,
      klCoefficient: 0,
      aggregation: 'token-mean',
      advantage: { stdEstimator: 'bessel', eps: 1e-6, scaleByStd: true },
      credit: { kind: 'outcome' },
      dynamicSampling: { kind: 'refill', stdThreshold: 1e-3, maxRounds: 10 },
      overlong: { enabled: true, maxLength: 20480, cacheLength: 4096, penaltyFactor: 1 },
      maskTruncated: false,
    });
  });

  it('fills defaults inside nested variants', () => {
    const config = parseDapoConfig({ credit: { kind: 'mix' }, dynamicSampling: { kind: 'drop' } });
    expect(config.credit).toEqual({ kind: 'mix', lambda: 1, process: { kind: 'process-sum' } });
    expect(config.dynamicSampling).toEqual({ kind: 'drop', stdThreshold: 1e-3 });
    expect(parseDapoConfig({ credit: { kind: 'process-min' } }).credit).toEqual({ kind: 'process-min', temperature: 0.1 });
  });

  it('documents every field, with a default source for each default', () => {
    const json = z.toJSONSchema(dapoConfigSchema, { io: 'input' }) as Record<string, unknown>;
    const undocumented: string[] = [];
    const visit = (node: unknown, path: string) => {
      if (typeof node !== 'object' || node === null) return;
      const record = node as Record<string, unknown>;
      const properties = record.properties as Record<string, Record<string, unknown>> | undefined;
      if (properties) {
        for (const [key, child] of Object.entries(properties)) {
          if (key !== 'kind' && typeof child.description !== 'string') undocumented.push(`${path}.${key}`);
          if (child.default !== undefined && typeof child.description === 'string' && !/Default|default/.test(child.description)) {
            undocumented.push(`${path}.${key} (default without source)`);
          }
          visit(child, `${path}.${key}`);
        }
      }
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
        const options = record[key];
        if (Array.isArray(options)) for (const option of options) visit(option, path);
      }
    };
    visit(json, 'config');
    expect(undocumented).toEqual([]);
  });

  it('names the offending field in an INVALID_CONFIG error', () => {
    expect(() => parseDapoConfig({ epsLow: 1.5 })).toThrow(/epsLow/);
    expect(() => parseDapoConfig({ promptsPerBatch: 4, promptsPerMiniBatch: 8 })).toThrow(/promptsPerMiniBatch must be <= promptsPerBatch/);
    expect(() => parseDapoConfig({ overlong: { maxLength: 10, cacheLength: 20 } })).toThrow(/cacheLength must be <= overlong.maxLength/);
    try {
      parseDapoConfig({ credit: { kind: 'best-guess' } });
      expect.unreachable();
    } catch (error) {
      expect(AgentFlowError.hasCode(error, 'INVALID_CONFIG')).toBe(true);
      expect((error as Error).message).toMatch(/credit/);
    }
  });

  it("parses credit 'gigpo' with GiGPO's defaults and refuses bad values", () => {
    expect(parseDapoConfig({ credit: { kind: 'gigpo' } }).credit).toEqual({ kind: 'gigpo', gamma: 0.95, omega: 1 });
    expect(parseDapoConfig({ credit: { kind: 'gigpo', gamma: 1, omega: 0.5 } }).credit).toEqual({ kind: 'gigpo', gamma: 1, omega: 0.5 });
    expect(() => parseDapoConfig({ credit: { kind: 'gigpo', gamma: 1.5 } })).toThrow(/credit\.gamma/);
    expect(() => parseDapoConfig({ credit: { kind: 'gigpo', omega: -1 } })).toThrow(/credit\.omega/);
    expect(() => parseDapoConfig({ credit: { kind: 'gigpo', lambda: 1 } })).toThrow(/lambda/);
  });

  it('dynamic sampling signal: absent unless set, prm only with a credit that uses step scores', () => {
    // Absent: the trainer resolves it from the credit (resolveGroupSignal).
    expect(parseDapoConfig({ credit: { kind: 'process-sum' } }).dynamicSampling).toEqual({ kind: 'refill', stdThreshold: 1e-3, maxRounds: 10 });
    expect(parseDapoConfig({ credit: { kind: 'mix' }, dynamicSampling: { kind: 'drop', signal: 'prm', prmStdThreshold: 0.01 } }).dynamicSampling).toEqual({
      kind: 'drop',
      stdThreshold: 1e-3,
      signal: 'prm',
      prmStdThreshold: 0.01,
    });
    expect(() => parseDapoConfig({ credit: { kind: 'outcome' }, dynamicSampling: { kind: 'refill', signal: 'either' } })).toThrow(
      /dynamicSampling\.signal: dynamicSampling\.signal 'prm' or 'either' needs a credit that uses step scores/,
    );
    expect(() => parseDapoConfig({ credit: { kind: 'gigpo' }, dynamicSampling: { kind: 'drop', signal: 'prm' } })).toThrow(/needs a credit that uses step scores/);
    expect(parseDapoConfig({ credit: { kind: 'gigpo' }, dynamicSampling: { kind: 'drop', signal: 'outcome' } }).dynamicSampling).toMatchObject({ signal: 'outcome' });
    expect(() => parseDapoConfig({ credit: { kind: 'process-sum' }, dynamicSampling: { kind: 'refill', signal: 'steps' } })).toThrow(/signal/);
    expect(() => parseDapoConfig({ credit: { kind: 'process-sum' }, dynamicSampling: { kind: 'refill', prmStdThreshold: -1 } })).toThrow(/prmStdThreshold/);
    expect(() => parseDapoConfig({ credit: { kind: 'process-sum' }, dynamicSampling: { kind: 'off', signal: 'prm' } })).toThrow(/signal/);
  });

  it('refuses unknown keys at every level, naming them', () => {
    expect(() => parseDapoConfig({ epsHihg: 0.3 })).toThrow(/epsHihg/);
    expect(() => parseDapoConfig({ overlong: { maxLenght: 10 } })).toThrow(/maxLenght/);
    expect(() => parseDapoConfig({ credit: { kind: 'outcome', lambda: 1 } })).toThrow(/lambda/);
    expect(() => parseDapoConfig({ dynamicSampling: { kind: 'drop', maxRounds: 3 } })).toThrow(/maxRounds/);
  });
});
