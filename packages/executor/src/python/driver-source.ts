/**
 * The Python program that runs inside the sandbox: it drops privileges, sets its limits,
 * then answers one request per frame. Frames in both directions are `AFP <bytes>\n`
 * followed by that many bytes of UTF-8 JSON. The protocol uses private copies of the
 * original stdin/stdout; fd 0 becomes /dev/null and fds 1 and 2 feed a pipe that a
 * thread drains into a bounded buffer, so neither `print`, `os.write(1, ...)` nor a child
 * process can write into the protocol or fill memory. Each request carries an id and a
 * fresh nonce that the answer must echo (the host drops or rejects anything else), and
 * output written by a thread of an earlier call, or between calls, is returned apart as
 * `late` output attributed to the call it came from, never as the current call's.
 *
 * Kept as a string so the bundle needs no extra file; passed as an argument and compiled
 * under the name `<agentflow-driver>` so tracebacks can leave its frames out.
 */
export const PYTHON_DRIVER_SOURCE = String.raw`
import ast, builtins, io, json, linecache, math, os, resource, signal, sys, textwrap, threading, traceback

CONFIG = json.loads(sys.argv[2])
DRIVER_FILE = '<agentflow-driver>'
START_MARKER = b'S' + os.urandom(16).hex().encode()
END_MARKER = b'E' + os.urandom(16).hex().encode()
CELL_PREFIX = '<cell-'


def _write_frame(fd, message):
    payload = json.dumps(message).encode('utf-8', 'backslashreplace')
    data = b'AFP ' + str(len(payload)).encode() + b'\n' + payload
    while data:
        data = data[os.write(fd, data):]


def _read_exact(fd, count):
    chunks = []
    while count > 0:
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        count -= len(chunk)
    return b''.join(chunks)


def _read_frame(fd):
    header = b''
    while not header.endswith(b'\n'):
        byte = os.read(fd, 1)
        if not byte:
            raise EOFError
        header += byte
        if len(header) > 32:
            raise ValueError('bad frame header')
    if not header.startswith(b'AFP '):
        raise ValueError('bad frame header')
    return json.loads(_read_exact(fd, int(header[4:-1])))


class Capture:
    """Drains fds 1 and 2; keeps the first and last halves of the limit, counts the rest.
    A call's output lies between a START and an END marker the driver writes; bytes outside
    them come from code of an earlier call and are kept apart as that call's late output."""

    def __init__(self, read_fd, limit):
        self.read_fd = read_fd
        self.limit = limit
        self.half = max(1, limit // 2)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.active = False
        self.call = 0
        self.previous = 0
        # call id -> [kept bytes, bytes written]
        self.late = {}
        self.reset(0)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def reset(self, call):
        with self.lock:
            self.head = bytearray()
            self.tail = bytearray()
            self.total = 0
            self.call = call
            self.done.clear()

    def add_late(self, call, data):
        with self.lock:
            entry = self.late.setdefault(call, [bytearray(), 0])
            room = self.limit - len(entry[0])
            if room > 0:
                entry[0] += data[:room]
            entry[1] += len(data)

    def take_late(self):
        with self.lock:
            late = [{'call': call, 'text': bytes(kept).decode('utf-8', 'replace'), 'bytes': total}
                    for call, (kept, total) in sorted(self.late.items())]
            self.late = {}
            return late

    def _append(self, data):
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.half:
                del self.tail[: len(self.tail) - self.half]

    def _consume(self, data):
        if not data:
            return
        if self.active:
            with self.lock:
                self._append(data)
        else:
            self.add_late(self.previous, data)

    def _run(self):
        pending = b''
        while True:
            try:
                chunk = os.read(self.read_fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            data = pending + chunk
            pending = b''
            while data:
                marker = END_MARKER if self.active else START_MARKER
                index = data.find(marker)
                if index < 0:
                    # The end may be the first bytes of a marker: hold them back.
                    keep = len(marker) - 1
                    if len(data) > keep:
                        self._consume(data[:-keep])
                        pending = data[-keep:]
                    else:
                        pending = data
                    break
                self._consume(data[:index])
                data = data[index + len(marker):]
                if self.active:
                    self.active = False
                    self.previous = self.call
                    self.done.set()
                else:
                    self.active = True

    def text(self):
        with self.lock:
            if len(self.head) + len(self.tail) >= self.total:
                data = bytes(self.head + self.tail)
                return data.decode('utf-8', 'replace'), False
            tail = bytes(self.tail[-self.half:])
            dropped = self.total - len(self.head) - len(tail)
            text = (bytes(self.head).decode('utf-8', 'replace')
                    + '\n... [' + str(dropped) + ' bytes of output cut] ...\n'
                    + tail.decode('utf-8', 'replace'))
            return text, True


class Output(io.TextIOBase):
    """sys.stdout and sys.stderr: one object for the REPL's life, no buffer of its own, so
    threads writing at once cannot corrupt it. A write from a thread that an earlier call
    started goes to that call's late output; any other goes to fd 1, in order with
    os.write(1, ...) and child processes."""

    encoding = 'utf-8'
    errors = 'backslashreplace'

    def __init__(self, fd, capture, origins):
        self.fd = fd
        self.capture = capture
        self.origins = origins
        self.buffer = OutputBytes(self)

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self.fd

    def flush(self):
        pass

    def close(self):
        pass  # code that closes sys.stdout keeps a working one for the next call

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError('write() argument must be str, not ' + type(text).__name__)
        self.emit(text.encode('utf-8', 'backslashreplace'))
        return len(text)

    def emit(self, data):
        origin = self.origins.get(threading.get_native_id())
        if origin is not None and origin < self.capture.call:
            self.capture.add_late(origin, data)
            return
        while data:
            data = data[os.write(self.fd, data):]


class OutputBytes:
    def __init__(self, text):
        self.text = text

    def write(self, data):
        self.text.emit(bytes(data))
        return len(data)

    def flush(self):
        pass


def _record_threads(origins, call):
    # Native ids of every thread alive at the end of a call (threading's or not); ids of
    # threads that ended are forgotten, so a reused id is not taken for an old thread.
    try:
        live = {int(name) for name in os.listdir('/proc/self/task')}
    except OSError:
        return
    for tid in list(origins):
        if tid not in live:
            del origins[tid]
    for tid in live:
        origins.setdefault(tid, call)


class CpuTimeExceeded(BaseException):
    pass


def _on_cpu_limit(signum, frame):
    raise CpuTimeExceeded('CPU time limit of ' + str(CONFIG['cpuSecondsPerCall']) + ' s per call exceeded')


def _set_limit(kind, value):
    if value is not None:
        resource.setrlimit(kind, (value, value))


def _setup():
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    null = os.open('/dev/null', os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    read_end, write_end = os.pipe()
    if os.getuid() == 0 and CONFIG.get('uid') is not None:
        os.setgroups([])
        os.setresgid(CONFIG['gid'], CONFIG['gid'], CONFIG['gid'])
        os.setresuid(CONFIG['uid'], CONFIG['uid'], CONFIG['uid'])
    os.chdir(CONFIG['cwd'])
    os.environ['PWD'] = CONFIG['cwd']
    # -I leaves the working folder off sys.path; a REPL has it, so modules written there import.
    sys.path.insert(0, CONFIG['cwd'])
    # The reader thread counts against RLIMIT_NPROC: start it before the limit is set.
    capture = Capture(read_end, CONFIG['maxOutputBytes'])
    _set_limit(resource.RLIMIT_AS, CONFIG['memoryBytes'])
    _set_limit(resource.RLIMIT_NPROC, CONFIG['maxProcesses'])
    _set_limit(resource.RLIMIT_FSIZE, CONFIG['maxFileBytes'])
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_NOFILE, CONFIG['maxOpenFiles'])
    total = CONFIG['cpuSecondsPerTask']
    resource.setrlimit(resource.RLIMIT_CPU, (total, total))
    # Only now do fds 1 and 2 leave the host's stderr: a failed setup is reported there.
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    return proto_in, proto_out, capture, write_end


def _cpu_used():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _parse(code, filename):
    try:
        return code, ast.parse(code, filename, 'exec')
    except SyntaxError as error:
        first = error
    lines = code.strip('\n').split('\n')
    candidates = [textwrap.dedent(code).strip('\n')]
    if len(lines) > 1:
        candidates.append(lines[0].strip() + '\n' + textwrap.dedent('\n'.join(lines[1:])))
    for candidate in candidates:
        try:
            return candidate, ast.parse(candidate, filename, 'exec')
        except SyntaxError:
            pass
    raise first


def _format_exception(error, filename):
    if isinstance(error, SyntaxError) and error.filename == filename:
        return ''.join(traceback.format_exception_only(type(error), error))
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename != DRIVER_FILE]
    text = ''.join(traceback.format_exception_only(type(error), error))
    if frames:
        text = 'Traceback (most recent call last):\n' + ''.join(traceback.StackSummary.from_list(frames).format()) + text
    return text


def _run_cell(code, namespace, counter):
    filename = CELL_PREFIX + str(counter) + '>'
    try:
        code, tree = _parse(code, filename)
    except SyntaxError as error:
        return _format_exception(error, filename)
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        exec(compile(tree, filename, 'exec'), namespace)
        if last is not None:
            value = eval(compile(last, filename, 'eval'), namespace)
            if value is not None:
                builtins._ = value
                print(repr(value))
        return None
    except BaseException as error:
        return _format_exception(error, filename)


def main():
    try:
        proto_in, proto_out, capture, write_end = _setup()
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    namespace = {'__name__': '__main__', '__builtins__': builtins}
    # The driver's own threads are never late: mark them with call 0 until the end.
    origins = {}
    _record_threads(origins, 0)
    driver_threads = dict(origins)
    stdout = Output(1, capture, origins)
    stderr = Output(2, capture, origins)
    _write_frame(proto_out, {'ready': True, 'nonce': CONFIG['nonce'], 'version': sys.version.split()[0]})
    driver_pid = os.getpid()
    while True:
        try:
            request = _read_frame(proto_in)
        except (EOFError, OSError):
            os._exit(0)
        call = request['id']
        nonce = request['nonce']
        for tid in driver_threads:
            origins[tid] = call
        capture.reset(call)
        os.write(write_end, START_MARKER)
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        sys.stdout = stdout
        sys.stderr = stderr
        signal.signal(signal.SIGXCPU, _on_cpu_limit)
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        soft = min(hard, math.ceil(_cpu_used() + CONFIG['cpuSecondsPerCall']))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        error = None
        try:
            error = _run_cell(request['code'], namespace, call)
            if os.getpid() != driver_pid:
                # A child forked by the code came back here: it must never answer.
                os._exit(0)
            os.dup2(write_end, 1)
            os.write(write_end, END_MARKER)
            capture.done.wait(2.0)
        except BaseException as late:
            error = (error or '') + 'interrupted: ' + repr(late)
        if os.getpid() != driver_pid:
            os._exit(0)
        _record_threads(origins, call)
        # Between calls only the task's total CPU limit applies, so an idle REPL is never signalled.
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        except (ValueError, OSError):
            pass  # the code lowered the hard limit itself; its choice
        output, truncated = capture.text()
        _write_frame(proto_out, {'id': call, 'nonce': nonce, 'output': output, 'truncated': truncated,
                                 'error': error, 'late': capture.take_late()})


main()
`;
