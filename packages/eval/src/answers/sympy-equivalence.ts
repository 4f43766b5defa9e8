import { spawn } from 'node:child_process';
import { latexToPlain } from './math-answer';

/**
 * The fixed program run by python3. It reads `{"pairs": [[a, b], ...]}` on stdin and prints
 * one JSON list: true / false / null (undecided) per pair. Inputs were whitelisted in
 * TypeScript first (names and operators only), so `parse_expr` sees no attribute access.
 */
const SCRIPT = `
import json, sys
try:
    import sympy
    from sympy.parsing.sympy_parser import parse_expr, standard_transformations, implicit_multiplication_application, convert_xor
except Exception:
    print(json.dumps({"status": "no_sympy"}))
    sys.exit(0)
transformations = standard_transformations + (implicit_multiplication_application, convert_xor)
names = {"sqrt": sympy.sqrt, "pi": sympy.pi, "oo": sympy.oo, "ln": sympy.log, "log": sympy.log, "exp": sympy.exp,
         "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "i": sympy.I, "I": sympy.I, "e": sympy.E}
def same(a, b):
    try:
        left = parse_expr(a, local_dict=dict(names), transformations=transformations)
        right = parse_expr(b, local_dict=dict(names), transformations=transformations)
        difference = sympy.simplify(left - right)
        if difference == 0:
            return True
        if difference.is_number:
            return abs(complex(sympy.N(difference, 30))) < 1e-12
        return False
    except Exception:
        return None
request = json.loads(sys.stdin.read())
print(json.dumps({"status": "ok", "results": [same(a, b) for a, b in request["pairs"]]}))
`;

const ALLOWED_NAMES = new Set(['sqrt', 'pi', 'oo', 'ln', 'log', 'exp', 'sin', 'cos', 'tan', 'i', 'I', 'e']);

/** Plain syntax that is safe to hand to sympy's parser, or undefined. */
export function toSympySyntax(answer: string): string | undefined {
  const plain = latexToPlain(answer).replace(/\\/g, '');
  if (plain === '' || plain.length > 300 || !/^[0-9a-zA-Z+\-*/^().\s]*$/.test(plain)) return undefined;
  for (const name of plain.match(/[a-zA-Z]+/g) ?? []) {
    if (name.length > 1 && !ALLOWED_NAMES.has(name)) return undefined;
  }
  return plain;
}

export interface SympyEquivalenceSettings {
  /** The interpreter (default `python3` on PATH). */
  pythonPath?: string;
  /** Wall-clock limit for one batch; the process is killed after it (default 20 s). */
  timeoutMs?: number;
}

/** Result of one batch: a verdict per pair (null: could not decide), or why none were given. */
export type SympyBatchResult = { status: 'ok'; results: (boolean | null)[] } | { status: 'unavailable'; reason: string };

export interface SympyEquivalence {
  /** Decides each pair in one Python process. Never throws. */
  compare(pairs: ReadonlyArray<readonly [string, string]>): Promise<SympyBatchResult>;
}

/**
 * Symbolic equivalence through sympy in a python3 child process: spawned without a shell,
 * with a fixed program, inputs on stdin, a timeout that kills it. When python3 or sympy is
 * missing, every call answers `unavailable` with the reason, so callers fall back to
 * string comparison and say so.
 */
export function createSympyEquivalence(settings: SympyEquivalenceSettings = {}): SympyEquivalence {
  const { pythonPath = 'python3', timeoutMs = 20_000 } = settings;
  return {
    async compare(pairs) {
      const converted = pairs.map(([a, b]) => [toSympySyntax(a), toSympySyntax(b)] as const);
      const runnable = converted.filter((pair): pair is readonly [string, string] => pair[0] !== undefined && pair[1] !== undefined);
      if (runnable.length === 0) return { status: 'ok', results: pairs.map(() => null) };
      const outcome = await runPython(pythonPath, JSON.stringify({ pairs: runnable }), timeoutMs);
      if (outcome.status !== 'ok') return outcome;
      const verdicts = [...outcome.results];
      return { status: 'ok', results: converted.map((pair) => (pair[0] === undefined || pair[1] === undefined ? null : (verdicts.shift() ?? null))) };
    },
  };
}

function runPython(pythonPath: string, input: string, timeoutMs: number): Promise<SympyBatchResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const finish = (result: SympyBatchResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    let child: ReturnType<typeof spawn>;
    try {
      // -I: isolated mode, ignores PYTHON* variables and the user site folder.
      child = spawn(pythonPath, ['-I', '-c', SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    } catch (cause) {
      resolve({ status: 'unavailable', reason: `cannot start ${pythonPath}: ${(cause as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish({ status: 'unavailable', reason: `${pythonPath} with sympy took longer than ${timeoutMs} ms and was stopped` });
    }, timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => finish({ status: 'unavailable', reason: `cannot start ${pythonPath}: ${error.message}` }));
    child.on('close', (code) => {
      try {
        const parsed = JSON.parse(stdout.trim().split('\n').pop() ?? '') as { status: string; results?: (boolean | null)[] };
        if (parsed.status === 'no_sympy') finish({ status: 'unavailable', reason: `sympy is not installed for ${pythonPath}` });
        else finish({ status: 'ok', results: parsed.results ?? [] });
      } catch {
        finish({ status: 'unavailable', reason: `${pythonPath} exited with ${code}: ${stderr.trim().slice(-300) || 'no output'}` });
      }
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}
