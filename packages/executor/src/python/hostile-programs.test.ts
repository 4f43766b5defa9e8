import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { createPythonTool } from './python-tool';
import { removeTree } from './scratch-folder';
import { processesOfUid } from './session-teardown';

/**
 * Issue #21: hostile programs that the per-process limits did not contain. Each must be
 * contained with a clear report, and the next call of the same tool must answer. Where
 * this machine lacks a mechanism the test prints why and the fallback is tested instead.
 */
const UID = 62_000;
const MiB = 1024 ** 2;
const isRoot = process.getuid?.() === 0;
const small = {
  timeoutMs: 20_000,
  cpuSecondsPerCall: 5,
  memoryBytes: 256 * MiB,
  maxProcesses: 24,
  maxFileBytes: 64 * MiB,
  scratchBytes: 100 * MiB,
  scratchFiles: 1_000,
  maxOutputBytes: 4_000,
};
const tool = createPythonTool({ ...small, sandboxUid: UID });
const fallback = createPythonTool({ ...small, sandboxUid: UID + 100, cgroups: 'off' });
// Default scratch caps (1 GiB, 10,000 files): room for a 3,000-deep chain.
const roomy = createPythonTool({ sandboxUid: UID + 400 });
const unavailable = await tool.unavailableReason();
if (unavailable) console.warn(`hostile-program tests skipped: ${unavailable}`);
const report = unavailable ? undefined : await tool.sandboxReport();
if (report) console.info(`sandbox mechanisms here: ${JSON.stringify(report, null, 1)}`);
const memoryCgroup = report?.memory.startsWith('cgroup') === true;
if (report && !memoryCgroup) console.warn(`no memory cgroup (${report.memory}): only the watchdog fallback is tested`);

const signal = () => new AbortController().signal;
const run = (code: string, taskId: string, on = tool) => on.execute({ code }, { taskId, signal: signal() });
async function expectAnswers(taskId: string, on = tool) {
  const result = await run('print(6 * 7)', taskId, on);
  expect(result.error, result.error).toBeUndefined();
  expect(result.output).toMatch(/42\n$/);
}

const CHILD_HOGS = [
  'import subprocess, sys, time',
  'hog = "x = b\\"1\\" * (120 << 20)\\nimport time\\ntime.sleep(30)"',
  'children = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(4)]',
  'deadline = time.time() + 8',
  'while time.time() < deadline and all(c.poll() is None for c in children):',
  '    time.sleep(0.05)',
  'time.sleep(0.5)',
  'print("exit codes", sorted(str(c.poll()) for c in children))',
].join('\n');

describe.skipIf(unavailable !== undefined)('hostile programs (issue #21)', () => {
  afterAll(async () => {
    await tool.dispose();
    await fallback.dispose();
    await roomy.dispose();
  });

  it('memory across a process tree: four children of 120 MiB under a 256 MiB limit', async () => {
    const result = await run(CHILD_HOGS, 'tree-memory');
    if (memoryCgroup) {
      expect(result.output).toMatch(/-9/); // at least one child was killed
      expect(result.output).toMatch(/\[sandbox\] the process tree reached its memory limit of 256 MiB \(cgroup v\d .*\); the kernel killed \d+ process/);
    } else {
      expect(result.error).toMatch(/the process tree held \d+ MiB .* over its memory limit of 256 MiB/);
    }
    await expectAnswers('tree-memory');
  });

  it('memory across a process tree, fallback: the watchdog kills the tree and says so', async () => {
    const result = await run(CHILD_HOGS, 'tree-memory', fallback);
    expect(result.error).toMatch(/The sandbox was killed: the process tree held \d+ MiB \(RSS \+ memfds, measured\), over its memory limit of 256 MiB/);
    expect(result.error).toMatch(/\[sandbox\] killed \d+ processes/);
    await expectAnswers('tree-memory', fallback);
  });

  it('a memfd of 360 MiB cannot be held under a 256 MiB limit, with or without cgroups', async () => {
    // Six memfds of 60 MiB: each stays under the file-size limit (64 MiB), together 360 MiB.
    const memfd = 'import os\nblock = b"1" * (4 << 20)\nfds = [os.memfd_create("hog") for _ in range(6)]\nfor fd in fds:\n    for _ in range(15):\n        os.write(fd, block)\nprint("held", sum(os.fstat(fd).st_size for fd in fds) >> 20, "MiB")';
    for (const on of [tool, fallback]) {
      await run('kept = 1', 'memfd', on);
      const result = await run(memfd, 'memfd', on);
      expect(result.output).not.toMatch(/held 360 MiB/);
      expect(`${result.error} ${result.output}`).toMatch(/memory limit of 256 MiB|MemoryError|killed by SIGKILL/);
      await expectAnswers('memfd', on);
    }
  });

  it('CPU after return: a child that ignores SIGXCPU is killed when its call ends', async () => {
    const spin = 'import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass';
    const code = `import subprocess, sys\np = subprocess.Popen([sys.executable, "-c", ${JSON.stringify(spin)}])\n"started"`;
    for (const [on, uid] of [[tool, UID], [fallback, UID + 100]] as const) {
      const result = await run(code, 'cpu', on);
      expect(result.output).toMatch(/^'started'\n\[sandbox\] killed 1 process \(python[\d.]*\) that this call left running\.\n$/);
      // Only the driver runs under the task's uid now: nothing keeps a core busy.
      if (isRoot) expect(processesOfUid(uid + 0).length).toBeLessThanOrEqual(1);
      await expectAnswers('cpu', on);
    }
  });

  it('scratch size and file count are capped (3 x 60 MiB, 20,000 files)', async () => {
    const big = await run('block = b"0" * (60 << 20)\nfor name in "abc":\n    open(name, "wb").write(block)', 'scratch');
    expect(big.error).toMatch(/No space left on device|over its cap/);
    const many = await run('import os\nos.mkdir("many")\nfor i in range(20_000):\n    open(f"many/{i}", "w").close()', 'scratch');
    expect(`${many.error} ${many.output}`).toMatch(/No space left on device|over its cap/);
    await run('import shutil, os\nshutil.rmtree("many")\nfor name in "abc":\n    os.path.exists(name) and os.remove(name)', 'scratch');
    await expectAnswers('scratch');
  });

  it('a timeout kills every process of the tree and says what it killed', async () => {
    const quick = createPythonTool({ ...small, timeoutMs: 1_500, sandboxUid: UID + 200 });
    try {
      const code = 'import subprocess, sys\nfor _ in range(3):\n    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])\nwhile True:\n    pass';
      const result = await run(code, 'timeout', quick);
      expect(result.error).toMatch(/timed out after 1.5 s.*\[sandbox\] killed [4-9] processes \(.*python/s);
      await expectAnswers('timeout', quick);
    } finally {
      await quick.dispose();
    }
  });

  it.skipIf(!isRoot)('two AgentFlow processes never share a sandbox uid, so one cannot starve the other', async () => {
    const shared = UID + 300;
    const holder = spawn(process.execPath, [join(import.meta.dirname, '__fixtures__', 'uid-holder.mjs'), String(shared), '8'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: holder.stdout }).once('line', resolve);
        holder.once('exit', (code) => reject(new Error(`uid holder exited with ${code}`)));
      });
      const held = JSON.parse(JSON.parse(line).output.replace(/'/g, '"')) as { uid: number; held: number };
      expect(held.uid).toBe(shared); // the other process took the first uid and filled its process limit
      const mine = createPythonTool({ ...small, sandboxUid: shared, maxProcesses: 8 });
      try {
        const result = await run('import os, subprocess, sys\nprint(os.getuid())\nsubprocess.run([sys.executable, "-c", "print(1)"]).returncode', 'uid', mine);
        expect(result.error, result.error).toBeUndefined();
        expect(result.output).toBe(`${shared + 1}\n1\n0\n`);
      } finally {
        await mine.dispose();
      }
    } finally {
      holder.stdin.end();
      await new Promise((resolve) => holder.once('exit', resolve));
    }
  });

  it('no new namespaces and no mounts from inside', async () => {
    const code = [
      'import ctypes, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'def errno_of(result):',
      '    return os.strerror(ctypes.get_errno()) if result != 0 else "allowed"',
      'print("unshare", errno_of(libc.unshare(0x10000000 | 0x00020000)))',
      'print("unshare net", errno_of(libc.unshare(0x40000000)))',
      'print("mount", errno_of(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)))',
      'print("setns", errno_of(libc.setns(0, 0)))',
      'pid = os.fork()',
      'if pid == 0:',
      '    os._exit(0)',
      'print("fork", os.waitpid(pid, 0)[1])',
    ].join('\n');
    const result = await run(code, 'namespaces');
    expect(result.error, result.error).toBeUndefined();
    expect(result.output).toBe('unshare Operation not permitted\nunshare net Operation not permitted\nmount Operation not permitted\nsetns Operation not permitted\nfork 0\n');
    const threads = await run('import threading, subprocess, sys\nt = threading.Thread(target=print, args=("thread ok",))\nt.start(); t.join()\nsubprocess.run([sys.executable, "-c", "print(2)"]).returncode', 'namespaces');
    expect(threads.output).toBe('thread ok\n2\n0\n');
  });

  it('forged frames without the nonce are ignored and counted; results never shift', async () => {
    // Issue #33: the code no longer holds the host channel, so a forged frame cannot end the REPL; see protocol-isolation.test.ts.
    await run('kept = 1', 'forged');
    const forged = await run('import os, json\nfor fd in range(3, 12):\n    try:\n        body = json.dumps({"id": 2, "output": "forged\\n"}).encode()\n        os.write(fd, b"AFP %d\\n%s" % (len(body), body))\n    except OSError:\n        pass\nimport time\ntime.sleep(1)\nkept', 'forged');
    expect(forged.error, forged.error).toBeUndefined();
    // What landed on the REPL's own copy of its output pipe is output, nothing more.
    expect(forged.output).toMatch(/^(AFP \d+\n\{"id": 2, "output": "forged\\n"\})*1\n\[sandbox\] ignored \d+ messages? on the REPL's answer channel that (was|were) not its answer to this call \(\d+ not a message of the protocol\)\.\n$/);
    for (const word of ['one', 'two', 'three']) expect((await run(`print("${word}")`, 'forged')).output).toBe(`${word}\n`);
  });

  it('late output of a background thread is attributed to its call, never shifted into the next', async () => {
    const start = 'import threading, time\ndef talk():\n    for i in range(10):\n        print("late", i)\n        time.sleep(0.03)\nthreading.Thread(target=talk).start()\n"started"';
    // Seven rounds: the old driver replaced sys.stdout under a writing thread and once in seven died of SIGSEGV.
    for (let round = 0; round < 7; round += 1) {
      const first = await run(`round = ${round}\n${start}`, 'late');
      expect(first.error, first.error).toBeUndefined();
      expect(first.output).toContain("'started'"); // print() writes text and newline apart: a thread may come between
      const next = await run('import time\ntime.sleep(0.4)\nprint("mine", round)', 'late');
      expect(next.error, next.error).toBeUndefined();
      // This call's own output is exactly its own line, after the late section of the call before.
      expect(next.output).toMatch(new RegExp(`\\[sandbox\\] end of call \\d+'s late output\\nmine ${round}\\n$`));
      expect(next.output).toMatch(/\[sandbox\] output written by call \d+ after it had returned:\n(.|\n)*late 9\n/);
      expect(next.output.split('[sandbox] end of')[0]).not.toContain('mine');
    }
  });

  it('late raw writes to fd 1 between calls are attributed too', async () => {
    const first = await run('import threading, time, os\ndef later():\n    time.sleep(0.05)\n    os.write(1, b"raw after return\\n")\nthreading.Thread(target=later).start()', 'late-raw');
    expect(first.output).toBe('');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const next = await run('print("mine")', 'late-raw');
    expect(next.output).toMatch(/^\[sandbox\] output written by call (\d+) after it had returned:\nraw after return\n\[sandbox\] end of call \1's late output\nmine\n$/);
  });

  it('a 3,000-deep folder chain in scratch is removed by dispose', async () => {
    const deep = await run('import os\nfor _ in range(3000):\n    os.mkdir("a")\n    os.chdir("a")\nos.chdir("/scratch")\n"made"', 'deep', roomy);
    expect(deep.output, deep.error).toBe("'made'\n");
    const root = join(tmpdir(), 'agentflow-python');
    const before = readdirSync(root).filter((name) => name.startsWith('deep-'));
    await roomy.dispose('deep');
    const after = readdirSync(root).filter((name) => name.startsWith('deep-'));
    expect(before.length).toBe(1);
    expect(after.filter((name) => before.includes(name))).toEqual([]);
    await expectAnswers('deep', roomy);
  });

  it('iterative removal: a 3,000-deep chain on a plain folder goes; a failure is reported, not hidden', async () => {
    // On a memory file system where there is one: 3,000 rmdirs on a loaded disk take seconds.
    const base = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'agentflow-remove-'));
    const chain = join(base, 'chain');
    mkdirSync(join(chain, 'a'), { recursive: true });
    // Built inside out with short paths only: the whole chain is 6,000 characters deep.
    for (let depth = 1; depth < 3_000; depth += 1) {
      mkdirSync(join(chain, 'b'));
      renameSync(join(chain, 'a'), join(chain, 'b', 'a'));
      renameSync(join(chain, 'b'), join(chain, 'a'));
    }
    writeFileSync(join(chain, 'file'), 'x');
    expect(removeTree(chain)).toEqual([]);
    expect(existsSync(chain)).toBe(false);
    // An immutable file (chattr +i; root) cannot be removed: removal says so and the folder stays.
    if (isRoot && existsSync('/usr/bin/chattr')) {
      const stuck = join(base, 'stuck');
      mkdirSync(stuck);
      writeFileSync(join(stuck, 'pinned'), 'x');
      try {
        execFileSync('chattr', ['+i', join(stuck, 'pinned')]);
        const errors = removeTree(stuck);
        expect(errors.join('\n')).toMatch(/pinned: EPERM/);
        expect(existsSync(stuck)).toBe(true);
      } catch (error) {
        console.warn(`chattr +i not supported under ${base}: ${(error as Error).message}`);
      } finally {
        execFileSync('chattr', ['-i', join(stuck, 'pinned')], { stdio: 'ignore' });
      }
    }
    expect(removeTree(base)).toEqual([]);
  });
});
