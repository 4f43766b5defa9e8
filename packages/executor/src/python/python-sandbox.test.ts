import { readFileSync, readdirSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonTool } from './python-tool';
import { processesOfUid } from './session-teardown';

/**
 * Hostile programs: each must be contained and reported, and the host and the next call
 * must be unaffected. Limits are small so the whole file runs in seconds.
 */
const SANDBOX_UID = 61_500;
process.env.AGENTFLOW_SANDBOX_TEST_SECRET = 'sk-do-not-leak';
const tool = createPythonTool({
  // Generous against the CPU limit: a loaded machine gives less than one CPU second per second.
  timeoutMs: 30_000,
  cpuSecondsPerCall: 1,
  memoryBytes: 512 * 1024 ** 2,
  maxProcesses: 16,
  maxOutputBytes: 2_000,
  maxFileBytes: 1024 ** 2,
  sandboxUid: SANDBOX_UID,
});
const unavailable = await tool.unavailableReason();
if (unavailable) console.warn(`python sandbox tests skipped: ${unavailable}`);
const isRoot = process.getuid?.() === 0;

// A second tool whose wall clock runs out long before its CPU limit.
const shortWall = createPythonTool({ timeoutMs: 1_500, cpuSecondsPerCall: 30, sandboxUid: SANDBOX_UID + 50 });

const run = (code: string, taskId = 'hostile') => tool.execute({ code }, { taskId, signal: new AbortController().signal });

/** Processes of the sandbox users still alive on the host (root only: uids are ours). */
function sandboxProcesses(firstUid = SANDBOX_UID, lastUid = SANDBOX_UID + 99): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]);
      if (uid >= firstUid && uid <= lastUid) pids.push(Number(name));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** After a hostile call the same task answers a plain call normally. */
async function expectHealthy(taskId = 'hostile') {
  const result = await run('print(2 + 2)', taskId);
  expect(result.error).toBeUndefined();
  expect(result.output).toMatch(/4\n$/);
}

describe.skipIf(unavailable !== undefined)('python sandbox against hostile code', () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((socket) => {
      connections += 1;
      socket.end('host secret\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await tool.dispose();
    await shortWall.dispose();
    server.close();
    if (isRoot) {
      for (let attempt = 0; attempt < 20 && sandboxProcesses().length > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(sandboxProcesses()).toEqual([]);
    }
  });

  it('1. an infinite loop hits the CPU limit; the REPL keeps its state', async () => {
    await run('kept = "still here"');
    const result = await run('while True:\n    pass');
    expect(result.error).toMatch(/CpuTimeExceeded: CPU time limit of 1 s per call exceeded/);
    expect((await run('kept')).output).toBe("'still here'\n");
  });

  it('2. a loop that ignores SIGXCPU is killed at the wall-clock limit; the next call gets a fresh REPL', async () => {
    const wall = (code: string) => shortWall.execute({ code }, { taskId: 'wall', signal: new AbortController().signal });
    const result = await wall('import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass');
    expect(result.error).toMatch(/timed out after 1.5 s/);
    const next = await wall('print(2 + 2)');
    expect(next.output).toBe('Note: the previous Python session ended, so variables defined before are gone.\n4\n');
  });

  it('3. a fork bomb runs into the process limit', async () => {
    const result = await run('import os\nwhile True:\n    os.fork()');
    expect(result.error).toMatch(/BlockingIOError|Resource temporarily unavailable/);
    await expectHealthy();
    // The bomb's ended children were zombies of the REPL, each holding a slot of the limit (16):
    // the next call gets them back, here 8 live subprocesses at once.
    const after = await run(
      'import subprocess, sys\nchildren = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1)"]) for _ in range(8)]\n[child.wait() for child in children]',
    );
    expect(after.error).toBeUndefined();
    expect(after.output).toBe('[0, 0, 0, 0, 0, 0, 0, 0]\n');
  });

  it('4. a fork bomb that swallows errors is killed at the wall clock, children included', async () => {
    const bomb = (code: string) => shortWall.execute({ code }, { taskId: 'bomb', signal: new AbortController().signal });
    const result = await bomb('import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass');
    expect(result.error).toMatch(/timed out after 1.5 s/);
    const after = await bomb('print(2 + 2)');
    expect(after.output, after.error).toMatch(/4\n$/);
    await shortWall.dispose('bomb');
  });

  it('5. a memory bomb raises MemoryError and the REPL survives', async () => {
    // bytes(n) reserves address space without touching pages: the limit, not RAM, stops it.
    const result = await run('blocks = []\nwhile True:\n    blocks.append(bytes(50 * 1024 * 1024))');
    expect(result.error, result.error).toMatch(/MemoryError/);
    expect((await run('del blocks\nlen("ok")')).output).toBe('2\n');
    expect((await run('x = [0] * 10**10')).error).toMatch(/MemoryError/);
  });

  it('6. huge output is cut to the limit, head and tail kept', async () => {
    const result = await run('print("A" * 10_000_000)\nprint("the end")');
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBeLessThan(2_200);
    expect(result.output).toMatch(/^AAAA/);
    expect(result.output).toMatch(/bytes of output cut/);
    expect(result.output).toMatch(/the end\n$/);
  });

  it('7. a flood of small prints is cut in the middle; first and last lines kept', async () => {
    const result = await run('for i in range(5_000):\n    print(f"spam {i} " * 50)');
    expect(result.error).toBeUndefined();
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBeLessThan(2_200);
    expect(result.output).toMatch(/^spam 0 spam 0 /);
    expect(result.output).toMatch(/spam 4999 \n$/);
    await expectHealthy();
  });

  it('8. no network: the host loopback server is unreachable, and so is the internet', async () => {
    const local = await run(`import socket\nsocket.create_connection(("127.0.0.1", ${port}), timeout=2)`);
    expect(local.error).toMatch(/ConnectionRefusedError|OSError/);
    const remote = await run('import socket\nsocket.create_connection(("1.1.1.1", 80), timeout=2)');
    expect(remote.error).toMatch(/Network is unreachable|OSError/);
    const dns = await run('import socket\nsocket.getaddrinfo("example.com", 80)');
    expect(dns.error).toMatch(/gaierror|Errno/);
    expect(connections).toBe(0);
  });

  it('9. host files are not there: /etc/shadow, /etc/passwd, this repository, /root', async () => {
    for (const path of ['/etc/shadow', '/etc/passwd', import.meta.filename, '/work', '/home']) {
      const result = await run(`open(${JSON.stringify(path)}).read()`);
      expect(result.error, path).toMatch(/FileNotFoundError|IsADirectoryError|PermissionError/);
      expect(result.output).toBe('');
    }
    const listing = await run('import os\nsorted(os.listdir("/"))');
    expect(listing.output).not.toMatch(/'work'|'home'|'etc', 'home'/);
  });

  it('10. writing outside the scratch folder fails (read-only or missing)', async () => {
    for (const path of ['/usr/lib/evil.so', '/evil', '/root/evil', '/proc/evil', '/dev/evil']) {
      const result = await run(`open(${JSON.stringify(path)}, "w").write("x")`);
      expect(result.error, path).toMatch(/OSError|PermissionError|Read-only file system|FileNotFoundError/);
    }
    const python = await run('import os, sys\nopen(os.path.join(sys.prefix, "evil.py"), "w")');
    expect(python.error).toMatch(/Read-only file system|PermissionError/);
  });

  it('11. killing the parent or every process it can signal harms nothing outside', async () => {
    const parent = await run('import os, signal\nos.kill(os.getppid(), signal.SIGKILL)');
    expect(parent.error).toMatch(/PermissionError|ProcessLookupError/);
    const init = await run('import os, signal\nos.kill(1, signal.SIGKILL)');
    expect(init.error).toMatch(/PermissionError|ProcessLookupError/);
    // kill(-1) reaches only processes of the sandbox user (here its own child).
    const all = await run(
      'import os, signal, subprocess, sys\nchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])\nos.kill(-1, signal.SIGKILL)\nchild.wait()',
    );
    expect(all.output).toBe('-9\n');
    await expectHealthy();
  });

  it("12. the host's environment variables are not visible", async () => {
    const result = await run('import os\nsorted(os.environ)');
    expect(result.output).not.toContain('AGENTFLOW_SANDBOX_TEST_SECRET');
    expect(result.output).not.toMatch(/'PYENV|'NODE|'VITEST/);
    const proc = await run('open("/proc/1/environ", "rb").read()');
    expect(proc.output).not.toContain('sk-do-not-leak');
  });

  it('13. subprocesses run only inside the sandbox: no shell, Python itself within the limits', async () => {
    const shell = await run('import subprocess\nsubprocess.run(["sh", "-c", "echo hi"])');
    expect(shell.error).toMatch(/FileNotFoundError/);
    const child = await run('import subprocess, sys\nsubprocess.run([sys.executable, "-c", "import os; print(7 * 6, os.getuid() != 0)"]).returncode');
    expect(child.output).toBe('42 True\n0\n');
  });

  it('14. deep recursion raises RecursionError; a C-stack overflow only ends the REPL', async () => {
    const shallow = await run('def f(n):\n    return f(n + 1)\nf(0)');
    expect(shallow.error).toMatch(/RecursionError/);
    await expectHealthy();
    // repr() recursing through a C slot overflows the C stack (SIGSEGV).
    const deep = await run('import sys\nsys.setrecursionlimit(10**8)\nclass A:\n    def __repr__(self):\n        return repr(self)\nrepr(A())');
    expect(deep.error).toMatch(/killed by SIGSEGV|MemoryError|RecursionError/);
    await run('0');
    await expectHealthy();
  });

  it('15. sys.exit and KeyboardInterrupt are reported; the REPL keeps going', async () => {
    await run('value = 5');
    expect((await run('import sys\nsys.exit(3)')).error).toMatch(/SystemExit: 3/);
    expect((await run('raise KeyboardInterrupt')).error).toMatch(/KeyboardInterrupt/);
    expect((await run('value')).output).toBe('5\n');
  });

  it('16. closing stdout, stderr and stdin does not break the next call', async () => {
    const result = await run('import os, sys\nsys.stdout.close()\nos.close(1)\nos.close(2)\nos.close(0)');
    expect(result.error).toBeUndefined();
    await expectHealthy();
  });

  it('17. signals: SIGALRM and self-SIGKILL end the REPL, reported', async () => {
    const alarm = await run('import signal, time\nsignal.alarm(1)\ntime.sleep(10)');
    expect(alarm.error).toMatch(/killed by SIGALRM|killed by SIGKILL|exited/);
    const self = await run('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)');
    expect(self.error).toMatch(/killed by SIGKILL|exited/);
    await expectHealthy();
  });

  it('18. forged protocol frames are ignored and reported, not a host crash', async () => {
    // Issue #33: the code holds no descriptor of the host channel; garbage on its answer socket is counted, the result stays its own.
    const result = await run('import os\nfor fd in range(3, 12):\n    try:\n        os.write(fd, b"AFP 7\\nnotjson")\n    except OSError:\n        pass\nimport time\ntime.sleep(1)');
    expect(result.error, result.error).toBeUndefined();
    expect(result.output).toMatch(/^(AFP 7\nnotjson)*\n?\[sandbox\] ignored \d+ messages? on the REPL's answer channel .*\(\d+ not a message of the protocol\)\.\n$/);
    await expectHealthy();
  });

  it('19. os._exit is reported with its exit code', async () => {
    const result = await run('import os\nos._exit(9)');
    expect(result.error).toMatch(/exited with code 9/);
    await expectHealthy();
  });

  it('20. a file larger than the file-size limit cannot be written', async () => {
    const result = await run('open("big.bin", "wb").write(b"0" * (4 * 1024 * 1024))');
    expect(result.error).toMatch(/File too large|OSError/);
    await expectHealthy();
  });

  it('21. a detached background process is killed when its call ends, and said so', async () => {
    const daemonUid = SANDBOX_UID + 80;
    const daemonTool = createPythonTool({ sandboxUid: daemonUid });
    try {
      const result = await daemonTool.execute(
        { code: 'import subprocess, sys\np = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)\np.pid > 0' },
        { taskId: 'daemon', signal: new AbortController().signal },
      );
      expect(result.output).toMatch(/^True\n\[sandbox\] killed 1 process \(python[\d.]*\) that this call left running\.\n$/);
      // Only the driver is left under the task's uid (the killed child may linger as an unreaped zombie).
      if (isRoot) expect(processesOfUid(daemonUid).length).toBe(1);
    } finally {
      await daemonTool.dispose('daemon');
    }
    if (isRoot) {
      for (let attempt = 0; attempt < 20 && sandboxProcesses(daemonUid, daemonUid).length > 0; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(sandboxProcesses(daemonUid, daemonUid)).toEqual([]);
    }
  });
});
