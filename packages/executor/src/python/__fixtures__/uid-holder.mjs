// The second AgentFlow process of the uid test: it takes a sandbox uid (same `sandboxUid`
// as the test process), fills that uid's process limit with sleepers, prints what it got
// as one JSON line, and holds until its stdin closes.
import { register } from 'node:module';

register('./ts-loader.mjs', import.meta.url);
const { createPythonTool } = await import('../python-tool.ts');
const [sandboxUid, maxProcesses] = process.argv.slice(2).map(Number);
const tool = createPythonTool({ sandboxUid, maxProcesses, timeoutMs: 20_000 });
const signal = new AbortController().signal;
// Threads count against RLIMIT_NPROC like processes, and unlike child processes they are
// not killed when the call ends: they hold the uid's limit full until dispose.
const result = await tool.execute(
  {
    code: [
      'import os, threading, time',
      'def hold():',
      '    time.sleep(3600)',
      'held = 0',
      'while True:',
      '    try:',
      '        threading.Thread(target=hold, daemon=True).start()',
      '        held += 1',
      '    except RuntimeError:',
      '        break',
      'print({"uid": os.getuid(), "held": held})',
    ].join('\n'),
  },
  { taskId: 'holder', signal },
);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await tool.dispose();
  process.exit(0);
});
