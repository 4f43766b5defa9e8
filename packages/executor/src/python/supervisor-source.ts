/**
 * The supervisor of the sandbox (Python): the only process that holds the host's channel
 * (its stdin and stdout), and the one that decides what a call's result is. It forks the
 * REPL process (`worker-source.ts`) before any user code exists, gives it its own pipes and
 * sockets and none of its own descriptors, then drops what would let the REPL reach it: as
 * root it becomes `nobody` (another uid: the REPL can neither signal it nor open its
 * /proc/<pid>/fd or memory); otherwise it makes itself non-dumpable, which closes the same
 * doors to a process of its own uid.
 *
 * What it takes as a call's result:
 * - Output: the bytes read from the call's own output pipe. Each call gets a new pipe from
 *   the REPL (its read end, passed with the call's id and nonce when the REPL starts the
 *   call; threads of earlier calls stay on their own call's pipe, see `worker-source.ts`).
 *   Bytes of a pipe whose call is over are that call's late output, returned labelled with
 *   the next answer (a line still being written then waits for the answer after, once), cut
 *   past `maxOutputBytes` with a count.
 * - The end of the call and its error text: the first message on the answer socket that
 *   (1) the kernel says was sent by the REPL process itself (SCM_CREDENTIALS: a forked child
 *   has another pid and cannot claim the REPL's), (2) carries the open call's id and the
 *   nonce that only this call's request held. Anything else on that socket is ignored and
 *   counted, and the count is said in the next answer.
 * Frames to the host are written by this process alone; nothing the REPL writes is passed
 * on as a frame.
 *
 * Part of the driver program (`driver-source.ts`); Python, kept as a string.
 */
export const PYTHON_SUPERVISOR_SOURCE = String.raw`
import array, select, struct

NOBODY = 65534
MAX_MESSAGE = 1 << 20
CREDENTIALS = struct.Struct('3i')
ANCILLARY = socket.CMSG_SPACE(CREDENTIALS.size) + socket.CMSG_SPACE(16 * 4)


def host_frame(message):
    payload = json.dumps(message).encode()
    return b'AFP ' + str(len(payload)).encode() + b'\n' + payload


class Capture:
    """One call's output: keeps the first and last halves of the limit, counts the rest."""

    def __init__(self, limit):
        self.half = max(1, limit // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data):
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self):
        if len(self.head) + len(self.tail) >= self.total:
            return bytes(self.head + self.tail).decode('utf-8', 'replace'), False
        tail = bytes(self.tail[-self.half:])
        dropped = self.total - len(self.head) - len(tail)
        text = (bytes(self.head).decode('utf-8', 'replace') + '\n... [' + str(dropped)
                + ' bytes of output cut] ...\n' + tail.decode('utf-8', 'replace'))
        return text, True


class LateOutput:
    """Output of calls that are over, per call, at most 'limit' bytes kept in all. A line
    that is still being written when an answer goes out (print writes its pieces one by one)
    is held for the next answer, once, so late output comes in whole lines and no character
    is split between two answers."""

    HOLD = 4096

    def __init__(self, limit):
        self.limit = limit
        self.kept = 0
        self.calls = {}  # call -> [bytes kept, bytes written, bytes held over from the last answer]

    def add(self, call, data):
        entry = self.calls.setdefault(call, [bytearray(), 0, 0])
        room = self.limit - self.kept
        if room > 0:
            entry[0] += data[:room]
            self.kept += min(room, len(data))
        entry[1] += len(data)

    def take(self, open_calls):
        late, held = [], {}
        for call, (kept, total, carried) in sorted(self.calls.items()):
            start = kept.rfind(b'\n') + 1
            partial = len(kept) - start
            # Held only when nothing was cut, the call's pipe is still open, and the line
            # did not wait already (a newline came after the held bytes, or none were held).
            if 0 < partial <= self.HOLD and total == len(kept) and call in open_calls and (start > 0 or carried == 0):
                held[call] = [kept[start:], partial, partial]
                kept, total = kept[:start], total - partial
            if total > 0:
                late.append({'call': call, 'text': bytes(kept).decode('utf-8', 'replace'), 'bytes': total})
        self.calls = held
        self.kept = sum(len(entry[0]) for entry in held.values())
        return late


class Call:
    def __init__(self, request, limit):
        self.id = request['id']
        self.host_nonce = request['nonce']
        self.nonce = os.urandom(16).hex()
        self.has_pipe = False
        self.capture = Capture(limit)
        self.notes = []


class Supervisor:
    def __init__(self, config, worker, requests, answers, out_read, pidfd):
        self.config = config
        self.limit = config['maxOutputBytes']
        self.worker = worker
        self.requests = requests
        self.answers = answers
        self.pidfd = pidfd
        self.poller = select.poll()
        self.pipes = {}
        self.call = None
        self.answered = None
        self.ready = False
        self.late = LateOutput(self.limit)
        self.ignored = {}
        self.inbox = bytearray()
        self.outbox = bytearray()
        self.queue = []
        self.watch(out_read, 0)
        answers.setblocking(False)
        requests.setblocking(False)
        self.poller.register(answers.fileno(), select.POLLIN)
        self.poller.register(0, select.POLLIN)
        if pidfd is not None:
            self.poller.register(pidfd, select.POLLIN)

    def watch(self, fd, owner):
        os.set_blocking(fd, False)
        self.pipes[fd] = owner
        self.poller.register(fd, select.POLLIN)

    def unwatch(self, fd):
        self.poller.unregister(fd)
        del self.pipes[fd]
        os.close(fd)

    def run(self):
        answers = self.answers.fileno()
        requests = self.requests.fileno()
        while True:
            events = dict(self.poller.poll(None if self.pidfd is not None else 100))
            # Answers first: one that ends the call drains the pipes itself, so the output
            # written before it is the call's; pipes then, the REPL's exit, the host last.
            if answers in events:
                if events[answers] & select.POLLIN:
                    self.read_answers()
                elif events[answers] & (select.POLLHUP | select.POLLERR):
                    self.poller.unregister(answers)
            for fd in [fd for fd in self.pipes if fd in events]:
                self.read_pipe(fd)
            if self.pidfd is None or self.pidfd in events:
                self.check_worker()
            if 0 in events:
                self.read_host()
            if requests in events:
                self.flush_requests()

    def read_pipe(self, fd, rounds=16):
        for _ in range(rounds):
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return
            if not data:
                self.unwatch(fd)
                return
            owner = self.pipes[fd]
            if self.call is not None and owner == self.call.id:
                self.call.capture.add(data)
            else:
                self.late.add(owner, data)

    def drain(self):
        # What was written before the answer is in the pipes now (at most a pipe's capacity
        # each, 1 MiB at most); bounded, so a thread writing without pause cannot hold the answer.
        for fd in list(self.pipes):
            self.read_pipe(fd, rounds=64)

    def check_worker(self):
        try:
            pid, status = os.waitpid(self.worker, os.WNOHANG)
        except ChildProcessError:
            os._exit(1)
        if pid == 0:
            return
        # The REPL is gone: end the same way, so the host sees its exit code or signal (128 + n, as bwrap reports it).
        if os.WIFSIGNALED(status):
            os._exit(128 + os.WTERMSIG(status))
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)

    def read_host(self):
        data = os.read(0, 1 << 20)
        if not data:
            os._exit(0)
        self.inbox += data
        while True:
            newline = self.inbox.find(b'\n')
            if newline < 0:
                return
            length = int(self.inbox[4:newline])
            if len(self.inbox) < newline + 1 + length:
                return
            self.queue.append(json.loads(bytes(self.inbox[newline + 1:newline + 1 + length])))
            del self.inbox[:newline + 1 + length]
            self.start_next()

    def start_next(self):
        if self.call is not None or not self.ready or not self.queue:
            return
        request = self.queue.pop(0)
        call = Call(request, self.limit)
        self.call = call
        payload = json.dumps({'id': call.id, 'nonce': call.nonce, 'code': request['code']}).encode()
        self.outbox += b'AFP ' + str(len(payload)).encode() + b'\n' + payload
        self.flush_requests()

    def flush_requests(self):
        requests = self.requests.fileno()
        try:
            sent = os.write(requests, self.outbox)
            del self.outbox[:sent]
        except BlockingIOError:
            pass
        except OSError:
            self.outbox.clear()  # the REPL is gone; its exit ends this process
        try:
            self.poller.unregister(requests)
        except KeyError:
            pass
        if self.outbox:
            self.poller.register(requests, select.POLLOUT)

    def read_answers(self):
        for _ in range(64):
            try:
                data, ancillary, flags, _ = self.answers.recvmsg(MAX_MESSAGE, ANCILLARY)
            except BlockingIOError:
                return
            sender = None
            fds = []
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    sender = CREDENTIALS.unpack(payload[:CREDENTIALS.size])[0]
                elif level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.extend(array.array('i', payload[: len(payload) - len(payload) % 4]))
            reason = self.accept(data, flags, sender, fds)
            if reason is not None:
                self.ignored[reason] = self.ignored.get(reason, 0) + 1
                for fd in fds:
                    os.close(fd)

    def accept(self, data, flags, sender, fds):
        """Returns why a message is not the REPL's, or None once it is used (its fds kept or closed)."""
        if sender != self.worker:
            return 'sent by another process'
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            return 'too large'
        try:
            message = json.loads(data)
        except ValueError:
            return 'not a message of the protocol'
        if not isinstance(message, dict):
            return 'not a message of the protocol'
        if not self.ready:
            if message.get('ready') is not True or fds:
                return 'not a message of the protocol'
            self.ready = True
            self.send_host({'ready': True, 'nonce': self.config['nonce'], 'version': str(message.get('version'))})
            self.start_next()
            return None
        call = self.call
        if call is None or message.get('id') != call.id or message.get('nonce') != call.nonce:
            last = self.answered
            if last is None or message.get('id') != last.id or message.get('nonce') != last.nonce:
                return "without the open call's id and nonce"
            if message.get('pipe') is True:
                # The call was ended (by a thread of the code) before its pipe came: what it
                # writes is its late output.
                return self.take_pipe(last, message, fds)
            return 'a second answer to a call already answered'
        if message.get('pipe') is True:
            return self.take_pipe(call, message, fds)
        if fds or 'error' not in message:
            return 'not a message of the protocol'
        self.answer(call, message['error'])
        return None

    def take_pipe(self, call, message, fds):
        if call.has_pipe or len(fds) != 1 or not stat_is_fifo(fds[0]):
            return 'not a message of the protocol'
        call.has_pipe = True
        self.watch(fds[0], call.id)
        if message.get('separated') is False:
            call.notes.append('threads of an earlier call are still running and could not be kept on their own output pipe ('
                              + str(message.get('reason')) + "); what they wrote during this call counts as this call's output.")
        return None

    def answer(self, call, error):
        self.drain()
        output, truncated = call.capture.text()
        notes = call.notes
        if self.ignored:
            count = sum(self.ignored.values())
            reasons = ', '.join(str(n) + ' ' + reason for reason, n in sorted(self.ignored.items()))
            notes = ['ignored ' + str(count) + ' message' + ('' if count == 1 else 's')
                     + " on the REPL's answer channel that " + ('was' if count == 1 else 'were')
                     + ' not its answer to this call (' + reasons + ').'] + notes
            self.ignored = {}
        self.answered = call
        self.call = None
        self.send_host({'id': call.id, 'nonce': call.host_nonce, 'output': output, 'truncated': truncated,
                        'error': error if isinstance(error, str) else None, 'late': self.late.take(set(self.pipes.values())), 'notes': notes})
        self.start_next()

    def send_host(self, message):
        write_all(1, host_frame(message))


def stat_is_fifo(fd):
    import stat
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def start_worker(config):
    out_read, out_write = os.pipe()
    host_requests, worker_requests = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    host_answers, worker_answers = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    host_answers.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    pid = os.fork()
    if pid == 0:
        try:
            # The host's channel (fds 0 and 1) leaves this process before anything else happens.
            null_fd = os.open('/dev/null', os.O_RDONLY)
            os.dup2(null_fd, 0)
            os.dup2(out_write, 1)
            host_requests.close()
            host_answers.close()
            requests_fd = worker_requests.detach()
            answers_fd = worker_answers.detach()
            keep = {0, 1, 2, null_fd, out_write, requests_fd, answers_fd}
            for name in os.listdir('/proc/self/fd'):
                if int(name) not in keep:
                    try:
                        os.close(int(name))
                    except OSError:
                        pass
            worker_main(config, requests_fd, answers_fd, out_write, null_fd)
        except BaseException:
            traceback.print_exc()
        os._exit(1)
    os.close(out_write)
    worker_requests.close()
    worker_answers.close()
    # Nothing comes back on the request socket: a write from the REPL's side fails.
    host_requests.shutdown(socket.SHUT_RD)
    return pid, host_requests, host_answers, out_read


def drop_privileges(config):
    if os.getuid() == 0 and config.get('uid') is not None:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
        return
    # Same uid as the REPL: only a non-dumpable process keeps its /proc/<pid>/fd and memory from it.
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_DUMPABLE, 0) failed')


def supervisor_main():
    config = json.loads(sys.argv[2])
    worker, requests, answers, out_read = start_worker(config)
    try:
        pidfd = os.pidfd_open(worker)
    except (AttributeError, OSError):
        pidfd = None  # Python < 3.9 or Linux < 5.3: the exit is polled every 100 ms
    drop_privileges(config)
    Supervisor(config, worker, requests, answers, out_read, pidfd).run()
`;
