import { PYTHON_SUPERVISOR_SOURCE } from './supervisor-source';
import { PYTHON_WORKER_SOURCE } from './worker-source';

/**
 * The Python program that bwrap starts inside the sandbox: two processes.
 *
 * - The supervisor (`supervisor-source.ts`) holds the channel to the host (its stdin and
 *   stdout: frames `AFP <bytes>\n` + UTF-8 JSON, each request with a call id and a fresh
 *   nonce that its answer echoes). It forks the REPL, reads the REPL's output pipes, and
 *   writes every frame the host reads.
 * - The REPL process (`worker-source.ts`) runs the user's code. It holds /dev/null, its
 *   output pipe, a request socket it can only read and an answer socket, never the host's
 *   channel, and it cannot reach the supervisor's descriptors or memory (another uid as
 *   root, a non-dumpable supervisor otherwise).
 *
 * Why this split, and what it guarantees: code can read all memory and write every
 * descriptor of its own process, so no secret inside that process (a nonce, a marker) can
 * tell the driver's writes from the code's. What a result is must therefore be decided by
 * the supervisor from what the kernel tells it: which pipe bytes came from (each call has
 * its own), which process sent a message (SCM_CREDENTIALS). The supervisor
 * guarantees: (1) no byte the code, its threads or its children write, to any descriptor,
 * becomes a frame to the host or lands in another call's output unlabelled: output of a
 * call that is over (a thread still printing, a child before it is killed) is returned as
 * that call's late output; (2) a call ends only with a message sent by the REPL process
 * itself that carries the call's id and nonce; a forked child, a stale answer or bytes
 * without the nonce are ignored and counted. What it cannot guarantee: code that reads the
 * nonce out of its own process's memory (or patches the driver functions there) can end
 * its own call early or choose its error text, which it could do anyway by returning or
 * raising; and since a REPL's state carries over between calls, code can change what later
 * calls do (redefine `print`, patch the driver in the REPL process), as in any REPL.
 *
 * Kept as a string so the bundle needs no extra file; passed as an argument and compiled
 * under the name `<agentflow-driver>` so tracebacks can leave its frames out.
 */
export const PYTHON_DRIVER_SOURCE = `${PYTHON_WORKER_SOURCE}\n${PYTHON_SUPERVISOR_SOURCE}\n\nsupervisor_main()\n`;
