import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as setTimers, clearTimeout as clearTimers } from 'node:timers';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createPythonTool } from './python-tool';

const tool = createPythonTool({ timeoutMs: 10_000, cpuSecondsPerCall: 2 });
const unavailable = await tool.unavailableReason();
if (unavailable) console.warn(`python tool tests skipped: ${unavailable}`);

const run = (code: string, taskId = 'basics') => tool.execute({ code }, { taskId, signal: new AbortController().signal });

describe.skipIf(unavailable !== undefined)('python tool', () => {
  afterAll(() => tool.dispose());

  it('keeps state across calls of one task and prints a final bare expression', async () => {
    expect(await run('x = 6 * 7')).toMatchObject({ output: '' });
    const result = await run('print("x is", x)\nx + 1');
    expect(result.output).toBe('x is 42\n43\n');
    expect(result.error).toBeUndefined();
    // None is not printed, as in the interactive interpreter.
    expect((await run('None')).output).toBe('');
  });

  it('leaves no timer armed once a task is disposed, so a process that used it can exit at once', async () => {
    expect((await run('1 + 1', 'short-lived')).output).toBe('2\n');
    // Every timer of a second or more armed while the task is disposed, until it fires or is cleared.
    const armed = new Set<unknown>();
    const arm = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => {
      const timer = setTimers(() => {
        armed.delete(timer);
        callback();
      }, ms);
      if ((ms ?? 0) >= 1_000) armed.add(timer);
      return timer;
    }) as typeof setTimeout);
    const clear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((timer: NodeJS.Timeout) => {
      armed.delete(timer);
      clearTimers(timer);
    }) as typeof clearTimeout);
    try {
      await tool.dispose('short-lived');
    } finally {
      arm.mockRestore();
      clear.mockRestore();
    }
    // The teardown's grace period (3 s) used to stay armed after the REPL had closed, holding the process.
    expect(armed.size).toBe(0);
  });

  it('keeps tasks apart', async () => {
    await run('secret = 1', 'task-a');
    const other = await run('secret', 'task-b');
    expect(other.error).toMatch(/NameError: name 'secret' is not defined/);
  });

  it('tolerates indented code', async () => {
    expect((await run('    a = 2\n    b = 3\n    a * b')).output).toBe('6\n');
    expect((await run('c = 4\n    d = c + 1\n    d')).output).toBe('5\n');
  });

  it('runs sympy and numpy', async () => {
    const result = await run('import sympy, numpy\nx = sympy.Symbol("x")\nprint(sympy.solve(x**2 - 4, x))\nint(numpy.arange(4).sum())', 'math');
    expect(result.error).toBeUndefined();
    expect(result.output).toBe('[-2, 2]\n6\n');
  });

  it('returns an exception as a traceback of the code, without the driver', async () => {
    const result = await run('def f():\n    return 1 / 0\nprint("before")\nf()');
    expect(result.output).toBe('before\n');
    expect(result.error).toContain('line 2, in f');
    expect(result.error).toMatch(/ZeroDivisionError: division by zero$/);
    expect(result.error).not.toContain('agentflow-driver');
  });

  it('reports a syntax error with its line', async () => {
    const result = await run('x = (1,\ny = 2');
    expect(result.error).toMatch(/SyntaxError/);
  });

  it('merges stdout and stderr in order', async () => {
    const result = await run('import sys\nprint("one")\nprint("two", file=sys.stderr)\nprint("three")');
    expect(result.output).toBe('one\ntwo\nthree\n');
  });

  it('writes files only in its scratch folder, which the host can read', async () => {
    const result = await run('import os\nopen("notes.txt", "w").write("hello")\nos.getcwd()', 'files');
    expect(result.output).toBe("'/scratch'\n");
    const scratchRoot = join((await import('node:os')).tmpdir(), 'agentflow-python');
    const folders = readdirSync(scratchRoot).filter((name) => name.startsWith('files-'));
    expect(folders.some((folder) => existsSync(join(scratchRoot, folder, 'notes.txt')))).toBe(true);
    const written = folders.map((folder) => join(scratchRoot, folder, 'notes.txt')).find((path) => existsSync(path))!;
    expect(readFileSync(written, 'utf8')).toBe('hello');
    // Modules written to the scratch folder import, as in a REPL started there.
    expect((await run('open("helper.py", "w").write("ANSWER = 42")\nimport helper\nhelper.ANSWER', 'files')).output).toBe('42\n');
    await tool.dispose('files');
    expect(existsSync(written)).toBe(false);
  });

  it('says clearly when bubblewrap is missing', async () => {
    const missing = createPythonTool({ bwrapPath: '/nonexistent/bwrap' });
    const result = await missing.execute({ code: '1' }, { taskId: 't', signal: new AbortController().signal });
    expect(result.error).toMatch(/needs bubblewrap.*"\/nonexistent\/bwrap" was not found.*apt-get install bubblewrap/);
    expect(await missing.unavailableReason()).toBe(result.error);
  });

  it('stops when the caller aborts, and the next call starts a fresh REPL', async () => {
    await run('kept = 1', 'abort');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const result = await tool.execute({ code: 'import time\ntime.sleep(30)' }, { taskId: 'abort', signal: controller.signal });
    expect(result.error).toMatch(/cancelled/);
    expect(result.durationMs).toBeLessThan(5_000);
    const next = await run('kept', 'abort');
    expect(next.output).toMatch(/previous Python session ended/);
    expect(next.error).toMatch(/NameError/);
  });
});
