import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createSympyEquivalence, toSympySyntax } from './sympy-equivalence';

const probe = spawnSync('python3', ['-I', '-c', 'import sympy'], { encoding: 'utf8' });
const hasSympy = probe.status === 0;
if (!hasSympy) console.log('sympy-equivalence: python3 with sympy is not available here; the live sympy tests are skipped.');

describe('toSympySyntax', () => {
  it('converts LaTeX and refuses anything outside a whitelist of names and operators', () => {
    expect(toSympySyntax('\\frac{\\sqrt{3}}{2}')).toBe('((sqrt(3))/(2))');
    expect(toSympySyntax('__import__("os").system("ls")')).toBeUndefined();
    expect(toSympySyntax('exec(1)')).toBeUndefined();
    expect(toSympySyntax('\\sqrt{2}+x')).toBe('sqrt(2)+x');
    expect(toSympySyntax('open')).toBeUndefined();
  });
});

describe.skipIf(!hasSympy)('createSympyEquivalence with a real python3', () => {
  it('decides symbolic equivalence in one batch', async () => {
    const sympy = createSympyEquivalence();
    const result = await sympy.compare([
      ['\\frac{\\sqrt{3}}{2}', '\\sqrt{3}/2'],
      ['2\\sqrt{2}', '\\sqrt{8}'],
      ['(x+1)^2', 'x^2+2x+1'],
      ['\\sqrt{2}', '1.41'],
      ['2\\pi', '\\pi'],
      ['__import__("os")', '1'],
    ]);
    expect(result).toEqual({ status: 'ok', results: [true, true, true, false, false, null] });
  });

  it('reports a missing interpreter and a timeout instead of throwing', async () => {
    const missing = await createSympyEquivalence({ pythonPath: '/nonexistent/python3' }).compare([['1', '1']]);
    expect(missing).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/cannot start \/nonexistent\/python3/) });
    const slow = await createSympyEquivalence({ timeoutMs: 1 }).compare([['x', 'x']]);
    expect(slow).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/longer than 1 ms/) });
  });
});
