import { describe, expect, it } from 'vitest';
import { AgentFlowError, assertNever, describeValue } from './agentflow-error';

describe('AgentFlowError', () => {
  it('carries a code, a cause and details', () => {
    const cause = new Error('socket hang up');
    const error = new AgentFlowError({ code: 'NETWORK_ERROR', message: 'boom', cause, details: { url: 'x' } });
    expect(error.code).toBe('NETWORK_ERROR');
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ url: 'x' });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('AgentFlowError');
  });

  it('isInstance recognises an error from another copy of the package', () => {
    // A second copy has its own class but the same registered symbol.
    const foreign = Object.assign(new Error('x'), { [Symbol.for('agentflow.error')]: true, code: 'TIMEOUT' });
    expect(foreign instanceof AgentFlowError).toBe(false);
    expect(AgentFlowError.isInstance(foreign)).toBe(true);
    expect(AgentFlowError.hasCode(foreign, 'TIMEOUT')).toBe(true);
    expect(AgentFlowError.isInstance(new Error('plain'))).toBe(false);
    expect(AgentFlowError.isInstance('a string')).toBe(false);
    expect(AgentFlowError.isInstance(null)).toBe(false);
  });

  it('assertNever names the unhandled value', () => {
    expect(() => assertNever('surprise' as never, 'credit mode')).toThrow('Unhandled credit mode: "surprise"');
  });

  it('describeValue truncates long values and survives cycles', () => {
    expect(describeValue('x'.repeat(200), 10)).toBe('"xxxxxx...');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeValue(cyclic)).toBe('[object Object]');
    // 100,000 levels: deeper than JSON.stringify (and String) can recurse.
    let deep: unknown[] = [];
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(describeValue(deep)).toBe('[an array of 1]');
  });
});
