/**
 * A classic-BPF seccomp program, built as bytes, that bubblewrap installs (`--seccomp FD`)
 * just before it runs the driver. It denies what a REPL never needs and what would let code
 * build a new world around itself: new namespaces (`setns`, `clone` with a namespace flag,
 * `clone3`, and `unshare` of anything but `CLONE_FILES`), mounts, keyrings, BPF, io_uring
 * (its operations bypass seccomp), ptrace, kernel modules. Everything else is allowed.
 * `unshare(CLONE_FILES)` (a private copy of the calling thread's fd table) is what the REPL
 * uses to keep threads of an earlier call out of a later call's output.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
/** Offsets in `struct seccomp_data`: nr, arch, instruction pointer, then args[6] (64-bit each). */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;
const OFFSET_ARG0_HIGH = 20;
/** The one flag `unshare` may carry: a private fd table for the calling thread. */
export const CLONE_FILES = 0x400;

/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (not NEWTIME: 0x80 is clone's exit signal). */
export const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

interface SyscallTable {
  audit: number;
  /** x86_64: syscall numbers at and above this are the x32 ABI, denied as a whole. */
  x32Base?: number;
  clone: number;
  clone3: number;
  unshare: number;
  denied: Record<string, number>;
}

const TABLES: Record<string, SyscallTable> = {
  x64: {
    audit: 0xc000003e,
    x32Base: 0x40000000,
    clone: 56,
    clone3: 435,
    unshare: 272,
    denied: {
      setns: 308, mount: 165, umount2: 166, pivot_root: 155, chroot: 161,
      open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
      keyctl: 250, add_key: 248, request_key: 249, bpf: 321, perf_event_open: 298, userfaultfd: 323,
      io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, ptrace: 101, process_vm_writev: 311,
      kexec_load: 246, init_module: 175, finit_module: 313, delete_module: 176, open_by_handle_at: 304,
    },
  },
  arm64: {
    audit: 0xc00000b7,
    clone: 220,
    clone3: 435,
    unshare: 97,
    denied: {
      setns: 268, mount: 40, umount2: 39, pivot_root: 41, chroot: 51,
      open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
      keyctl: 219, add_key: 217, request_key: 218, bpf: 280, perf_event_open: 241, userfaultfd: 282,
      io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, ptrace: 117, process_vm_writev: 271,
      kexec_load: 104, init_module: 105, finit_module: 273, delete_module: 106, open_by_handle_at: 265,
    },
  },
};

/** Names of the system calls the filter denies on this architecture (for the README and reports). */
export function deniedSyscalls(arch: string = process.arch): string[] {
  const table = TABLES[arch];
  return table ? [...Object.keys(table.denied), 'clone3', 'clone(namespace flags)', 'unshare(anything but CLONE_FILES)'] : [];
}

type Instruction = [code: number, jt: number | string, jf: number | string, k: number];

/**
 * The filter for `arch` (Node's `process.arch`), or undefined where no syscall table is
 * known (then the sandbox runs without it and says so).
 */
export function buildSeccompFilter(arch: string = process.arch): Buffer | undefined {
  const table = TABLES[arch];
  if (!table) return undefined;
  // Jump targets are labels (a string) or 0 (the next instruction), resolved below.
  const program: Instruction[] = [];
  const labels: Record<string, number> = {};
  const label = (name: string) => {
    labels[name] = program.length;
  };
  program.push([BPF_LD_W_ABS, 0, 0, OFFSET_ARCH]);
  program.push([BPF_JMP_JEQ_K, 1, 0, table.audit]);
  // A foreign ABI (32-bit calls on a 64-bit kernel) has other numbers: none of it is allowed.
  program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS]);
  program.push([BPF_LD_W_ABS, 0, 0, OFFSET_NR]);
  if (table.x32Base !== undefined) program.push([BPF_JMP_JGE_K, 'nosys', 0, table.x32Base]);
  for (const nr of Object.values(table.denied)) program.push([BPF_JMP_JEQ_K, 'perm', 0, nr]);
  // glibc falls back to clone() when clone3 answers ENOSYS; clone's flags can be inspected.
  program.push([BPF_JMP_JEQ_K, 'nosys', 0, table.clone3]);
  program.push([BPF_JMP_JEQ_K, 'unshare', 0, table.unshare]);
  program.push([BPF_JMP_JEQ_K, 0, 'allow', table.clone]);
  program.push([BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW]);
  program.push([BPF_JMP_JSET_K, 'perm', 'allow', CLONE_NAMESPACE_FLAGS]);
  label('unshare');
  // unshare's flags are an unsigned long: any bit but CLONE_FILES, low or high word, is denied.
  program.push([BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW]);
  program.push([BPF_JMP_JSET_K, 'perm', 0, ~CLONE_FILES >>> 0]);
  program.push([BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_HIGH]);
  program.push([BPF_JMP_JEQ_K, 'allow', 'perm', 0]);
  label('allow');
  program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW]);
  label('perm');
  program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM]);
  label('nosys');
  program.push([BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS]);
  const resolve = (target: number | string, at: number) => {
    if (typeof target === 'number') return target;
    const offset = (labels[target] ?? Number.NaN) - at - 1;
    if (!(offset >= 0 && offset <= 255)) throw new Error(`seccomp jump to ${target} out of range at ${at}`);
    return offset;
  };
  const resolved = program.map(([code, jt, jf, k], at): [number, number, number, number] => [code, resolve(jt, at), resolve(jf, at), k]);
  const bytes = Buffer.alloc(resolved.length * 8);
  resolved.forEach(([code, jt, jf, k], index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}
