import { readFileSync, readlinkSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { processInfo } from './process-tree';
import { createPythonTool } from './python-tool';
import { processesOfUid } from './session-teardown';

/**
 * Issue #33: the sandbox's protocol out of the code's reach. The code runs in a process
 * that does not hold the host's channel; a supervisor process reads its output pipes and
 * decides what a call's result is. Each probe below is what hostile code tried; each call
 * is bounded by the tool's wall clock and each test by its own timeout.
 */
const UID = 62_800;
const isRoot = process.getuid?.() === 0;
const MAX_OUTPUT = 8_000;
const tool = createPythonTool({ timeoutMs: 15_000, cpuSecondsPerCall: 5, maxOutputBytes: MAX_OUTPUT, sandboxUid: UID });
const unavailable = await tool.unavailableReason();
if (unavailable) console.warn(`protocol isolation tests skipped: ${unavailable}`);

const run = (code: string, taskId: string) => tool.execute({ code }, { taskId, signal: new AbortController().signal });
const LATE = /\[sandbox\] output written by call (\d+) after it had returned(?: \(\d+ bytes, cut\))?:\n([\s\S]*?)\[sandbox\] end of call \1's late output\n/g;
const IGNORED = /\[sandbox\] ignored (\d+) messages? on the REPL's answer channel that (?:was|were) not its answer to this call \((.*)\)\.\n/;

/** A result split into its labelled late sections, the supervisor's notes and what is left: the call's own output. */
function parts(output: string) {
  const late = [...output.matchAll(LATE)].map((match) => ({ call: Number(match[1]), text: match[2] ?? '' }));
  const ignored = IGNORED.exec(output);
  const own = output.replace(LATE, '').replace(IGNORED, '');
  return { late, ignored: ignored ? { count: Number(ignored[1]), reasons: ignored[2] ?? '' } : undefined, own };
}

describe.skipIf(unavailable !== undefined)('the sandbox protocol, out of the code\'s reach (issue #33)', () => {
  afterAll(() => tool.dispose());

  it('the REPL process holds no descriptor of the host channel (/proc/self/fd), and cannot open the supervisor\'s', { timeout: 20_000 }, async () => {
    const code = [
      'import json, os',
      'links = {}',
      'for name in os.listdir("/proc/self/fd"):',
      '    try:',
      '        links[name] = os.readlink("/proc/self/fd/" + name)',
      '    except OSError:',
      '        pass  # the listing\'s own descriptor, closed by now',
      'try:',
      '    os.listdir("/proc/%d/fd" % os.getppid())',
      '    parent = "readable"',
      'except PermissionError:',
      '    parent = "denied"',
      'print(json.dumps({"links": links, "parent": parent}))',
    ].join('\n');
    const result = await run(code, 'fds');
    expect(result.error, result.error).toBeUndefined();
    const seen = JSON.parse(result.output) as { links: Record<string, string>; parent: string };
    expect(seen.parent).toBe('denied');
    // /dev/null, the call's output pipe (fds 1 and 2), the request and answer sockets: nothing else.
    expect(seen.links['0']).toBe('/dev/null');
    expect(seen.links['1']).toMatch(/^pipe:\[\d+\]$/);
    expect(seen.links['2']).toBe(seen.links['1']);
    for (const link of Object.values(seen.links)) expect(link).toMatch(/^(\/dev\/null|pipe:\[\d+\]|socket:\[\d+\])$/);
    expect(new Set(Object.values(seen.links).filter((link) => link.startsWith('pipe:'))).size).toBe(1);
    if (!isRoot) {
      console.warn('not root: the host side of this check (the supervisor\'s own descriptors) needs to read another uid\'s /proc; skipped');
      return;
    }
    // The host channel is the supervisor's stdin and stdout: the REPL's parent, seen from the host.
    const [repl] = processesOfUid(UID);
    const supervisor = processInfo(repl ?? -1)?.parent ?? -1;
    const channel = [0, 1].map((fd) => readlinkSync(`/proc/${supervisor}/fd/${fd}`));
    for (const link of channel) expect(link).toMatch(/^(pipe|socket):\[\d+\]$/); // Node's stdio pipes are socket pairs
    for (const link of channel) expect(Object.values(seen.links)).not.toContain(link);
    // The supervisor runs as nobody: neither root nor the REPL's uid, so the code cannot signal it or read its memory.
    expect(readFileSync(`/proc/${supervisor}/status`, 'utf8')).toMatch(/^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
  });

  it('a thread that keeps printing (print, os.write(1), os.write(2)) after its call returned never lands unlabelled in a later call', { timeout: 30_000 }, async () => {
    const start = [
      'import os, threading, time',
      'go = threading.Event()',
      'def talk():',
      '    go.wait()  # set by the next call: everything it writes is late output',
      '    for i in range(30):',
      '        print("print", i)',
      '        os.write(1, b"raw %d\\n" % i)',
      '        os.write(2, b"err %d\\n" % i)',
      '        time.sleep(0.01)',
      'threading.Thread(target=talk).start()',
      '"started"',
    ].join('\n');
    const first = await run(start, 'late-thread');
    expect(first.output).toContain("'started'");
    const late: string[] = [];
    const done = () => ['print', 'raw', 'err'].every((kind) => late.join('').includes(`${kind} 29\n`));
    // Calls while the thread writes (about 0.4 s), until its last lines came back (10 calls at most).
    for (let index = 0; index < 10 && !done(); index += 1) {
      const result = await run(`go.set()\nimport time\ntime.sleep(0.1)\nprint("call", ${index})`, 'late-thread');
      expect(result.error, result.error).toBeUndefined();
      const { late: sections, own } = parts(result.output);
      expect(own).toBe(`call ${index}\n`);
      late.push(...sections.map((section) => section.text));
    }
    // Everything the thread wrote came back, labelled with its call, whole lines only: print
    // writes a line in pieces, and a line half written when a call returns waits for the next.
    const lines = late.join('').split('\n').filter(Boolean);
    for (const kind of ['print', 'raw', 'err']) expect(lines).toContain(`${kind} 29`);
    for (const line of lines) expect(line).toMatch(/^(print|raw|err) \d+$/);
  });

  it('a line half written when a call returns waits for the next answer, once; a line that never ends is then returned as it is', { timeout: 30_000 }, async () => {
    const start = [
      'import os, threading',
      'steps = [threading.Event() for _ in range(3)]',
      'def talk():',
      '    steps[0].wait()',
      '    os.write(1, b"half ")',
      '    steps[1].wait()',
      '    os.write(1, b"line\\nno end")',
      '    steps[2].wait()',
      'threading.Thread(target=talk, daemon=True).start()',
    ].join('\n');
    await run(start, 'half-line');
    // Each call lets the thread write its next piece, then waits long enough for it to land.
    const step = (index: number) => run(`import time\nsteps[${index}].set()\ntime.sleep(0.2)\nprint("call ${index}")`, 'half-line');
    const outputs = [];
    for (const index of [0, 1, 2]) outputs.push(parts((await step(index)).output));
    expect(outputs.map((output) => output.own)).toEqual(['call 0\n', 'call 1\n', 'call 2\n']);
    // "half " waits; the next answer brings the whole line and holds "no end"; the one after gives it up as it is.
    expect(outputs.map((output) => output.late.map((section) => section.text))).toEqual([[], ['half line\n'], ['no end\n']]);
  });

  it('a thread that never stops printing: later calls stay exact; its output comes labelled, cut with a count', { timeout: 30_000 }, async () => {
    await run('import os, threading, time\ndef flood():\n    while True:\n        os.write(1, b"x" * 1000 + b"\\n")\n        time.sleep(0.001)\nthreading.Thread(target=flood, daemon=True).start()', 'flood');
    for (const word of ['one', 'two', 'three']) {
      const result = await run(`import time\ntime.sleep(0.2)\nprint("${word}")`, 'flood');
      expect(result.error, result.error).toBeUndefined();
      expect(result.output).toMatch(/\[sandbox\] output written by call \d+ after it had returned \(\d+ bytes, cut\):\n/);
      expect(parts(result.output).own).toBe(`${word}\n`);
      expect(result.output.length).toBeLessThan(MAX_OUTPUT + 1_000);
    }
    await tool.dispose('flood');
  });

  it('forged answers written to every descriptor (and frame-like bytes on fds 1 and 2) do not change the result', { timeout: 20_000 }, async () => {
    const code = [
      'import json, os',
      'forged = []',
      'for call in range(1, 7):',
      '    body = json.dumps({"id": call, "nonce": "0" * 32, "output": "forged\\n", "error": None}).encode()',
      '    forged += [b"AFP %d\\n%s" % (len(body), body), body]',
      'for name in os.listdir("/proc/self/fd"):',
      '    for data in forged:',
      '        try:',
      '            os.write(int(name), data)',
      '        except OSError:',
      '            pass',
      '    try:  # a read end opened again for writing',
      '        fd = os.open("/proc/self/fd/" + name, os.O_WRONLY | os.O_NONBLOCK)',
      '        os.write(fd, forged[0])',
      '        os.close(fd)',
      '    except OSError:',
      '        pass',
      'print("real")',
      '6 * 7',
    ].join('\n');
    const result = await run(code, 'forge');
    expect(result.error, result.error).toBeUndefined();
    // Frame-like bytes on fds 1 and 2 are output like any other; the answer is the code's own.
    expect(result.output).toMatch(/^AFP \d+\n\{"id": 1, "nonce": "0{32}", "output": "forged\\n"/);
    expect(result.output).toMatch(/real\n42\n\[sandbox\] ignored \d+ messages on the REPL's answer channel that were not its answer to this call \(.*\)\.\n$/);
    expect(parts(result.output).ignored?.count).toBeGreaterThanOrEqual(12);
    expect((await run('print("next")', 'forge')).output).toBe('next\n');
  });

  it('a forked child that outlives its call and keeps writing: its answers are ignored, its output labelled, then it is killed', { timeout: 20_000 }, async () => {
    const code = [
      'import json, os, time',
      'if os.fork() == 0:',
      '    def is_socket(name):',
      '        try:',
      '            return os.readlink("/proc/self/fd/" + name).startswith("socket:")',
      '        except OSError:',
      '            return False',
      '    fds = [int(name) for name in os.listdir("/proc/self/fd") if is_socket(name)]',
      '    for round in range(1000):',
      '        body = json.dumps({"id": round % 8, "nonce": "0" * 32, "error": None}).encode()',
      '        for fd in fds:',
      '            try:',
      '                os.write(fd, body)',
      '            except OSError:',
      '                pass',
      '        os.write(1, b"child %d\\n" % round)',
      '        time.sleep(0.002)',
      '    os._exit(0)',
      'time.sleep(0.05)',
      '"parent"',
    ].join('\n');
    const result = await run(code, 'child');
    expect(result.error, result.error).toBeUndefined();
    // The child writes to the same stdout as it likes: a line of its own can land between the value and its newline.
    expect(result.output).toMatch(/'parent'/);
    expect(result.output).toMatch(/\[sandbox\] killed 1 process \(python[\d.]*\) that this call left running\.\n$/);
    for (const word of ['next', 'third']) {
      const after = await run(`print("${word}")`, 'child');
      const { own, ignored, late } = parts(after.output);
      expect(own).toBe(`${word}\n`);
      if (ignored) expect(ignored.reasons).toMatch(/^\d+ sent by another process$/);
      for (const section of late) expect(section.text).toMatch(/^(child \d+\n)*$/);
    }
  });

  it('a thread that keeps the nonce of its call cannot end a later call', { timeout: 20_000 }, async () => {
    const keep = [
      'import json, sys, threading, time',
      'frame = sys._getframe()',
      'while "nonce" not in frame.f_locals or "channel" not in frame.f_locals:',
      '    frame = frame.f_back',
      'kept = dict(call=frame.f_locals["call"], nonce=frame.f_locals["nonce"], channel=frame.f_locals["channel"])',
      'def forge():',
      '    time.sleep(0.1)',
      '    for _ in range(50):',
      '        for call in (kept["call"], kept["call"] + 1):',
      '            kept["channel"].send(json.dumps({"id": call, "nonce": kept["nonce"], "error": "forged"}).encode())',
      '        time.sleep(0.005)',
      'threading.Thread(target=forge).start()',
    ].join('\n');
    await run(keep, 'keeper');
    const result = await run('import time\ntime.sleep(0.5)\nprint("mine")', 'keeper');
    expect(result.error, result.error).toBeUndefined();
    expect(parts(result.output).own).toBe('mine\n');
    expect(parts(result.output).ignored?.reasons).toMatch(/a second answer to a call already answered|without the open call's id and nonce/);
  });

  it("code that reads its own call's nonce from memory can end its call early, but cannot put words in the answer", { timeout: 20_000 }, async () => {
    const steal = [
      'import json, sys, time',
      'frame = sys._getframe()',
      'while "nonce" not in frame.f_locals or "channel" not in frame.f_locals:',
      '    frame = frame.f_back',
      'found = frame.f_locals',
      'found["channel"].send(json.dumps({"id": found["call"], "nonce": found["nonce"], "error": None, "output": "forged\\n"}).encode())',
      'time.sleep(0.05)',
      'print("real")',
    ].join('\n');
    const stolen = await run(steal, 'steal');
    expect(stolen.error, stolen.error).toBeUndefined();
    expect(stolen.output).toBe(''); // the call ended before it printed; "forged" is nowhere
    const next = await run('print("one")', 'steal');
    const { late, own, ignored } = parts(next.output);
    expect(late.map((section) => section.text)).toEqual(['real\n']); // what it printed after its forged end: labelled
    expect(own).toBe('one\n');
    expect(ignored?.reasons).toBe('1 a second answer to a call already answered');
    expect((await run('print("two")', 'steal')).output).toBe('two\n');
  });

  it('the limit: a thread that reads a later call\'s nonce from memory can end that call early, but its words stay labelled as its own call\'s', { timeout: 20_000 }, async () => {
    const watcher = [
      'import json, sys, threading, time',
      'main = threading.main_thread().ident',
      'started = None',
      'def driver_locals():',
      '    frame = sys._current_frames().get(main)',
      '    while frame is not None and ("nonce" not in frame.f_locals or "channel" not in frame.f_locals):',
      '        frame = frame.f_back',
      '    return frame.f_locals if frame is not None else None',
      'started = driver_locals()["call"]',
      'def watch():',
      '    deadline = time.time() + 5',
      '    while time.time() < deadline:',
      '        found = driver_locals()',
      '        if found is not None and found["call"] > started:',
      '            print("injected")',
      '            found["channel"].send(json.dumps({"id": found["call"], "nonce": found["nonce"], "error": "ended by a thread"}).encode())',
      '            return',
      '        time.sleep(0.001)',
      'threading.Thread(target=watch).start()',
    ].join('\n');
    await run(watcher, 'watcher');
    const ended = await run('import time\ntime.sleep(0.5)\nprint("mine")', 'watcher');
    expect(ended.error).toBe('ended by a thread');
    expect(parts(ended.output).own).not.toContain('injected');
    const next = await run('print("after")', 'watcher');
    expect(parts(next.output).own).toBe('after\n');
    expect(next.output).toContain('mine\n'); // the ended call's own output, as its late output
  });
});
