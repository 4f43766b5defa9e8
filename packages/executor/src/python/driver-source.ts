/**
 * The Python program that runs inside the sandbox: it drops privileges, sets its limits,
 * then answers one request per frame. Frames in both directions are `AFP <bytes>\n`
 * followed by that many bytes of UTF-8 JSON. The protocol uses private copies of the
 * original stdin/stdout; fd 0 becomes /dev/null and fds 1 and 2 feed a pipe that a
 * thread drains into a bounded buffer, so neither `print`, `os.write(1, ...)` nor a child
 * process can write into the protocol or fill memory.
 *
 * Kept as a string so the bundle needs no extra file; passed as an argument and compiled
 * under the name `<agentflow-driver>` so tracebacks can leave its frames out.
 */
export const PYTHON_DRIVER_SOURCE = String.raw`
import ast, builtins, io, json, linecache, math, os, resource, signal, sys, textwrap, threading, traceback

CONFIG = json.loads(sys.argv[2])
DRIVER_FILE = '<agentflow-driver>'
MARKER = os.urandom(16).hex().encode()
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
    """Drains fds 1 and 2; keeps the first and last halves of the limit, counts the rest."""

    def __init__(self, read_fd, limit):
        self.read_fd = read_fd
        self.half = max(1, limit // 2)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.reset()
        threading.Thread(target=self._run, daemon=True).start()

    def reset(self):
        with self.lock:
            self.head = bytearray()
            self.tail = bytearray()
            self.total = 0
            self.window = b''
            self.done.clear()

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

    def _run(self):
        while True:
            try:
                chunk = os.read(self.read_fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self.lock:
                joined = self.window + chunk
                index = joined.find(MARKER)
                if index >= 0:
                    # Bytes of the window were appended already; only the new part counts.
                    self._append(joined[len(self.window):index] if index >= len(self.window) else b'')
                    if index < len(self.window):
                        self._trim(len(self.window) - index)
                    self.window = b''
                    self.done.set()
                    continue
                self._append(chunk)
                self.window = joined[-(len(MARKER) - 1):]

    def _trim(self, count):
        # A marker split across reads: drop its first bytes, appended with the last read.
        self.total -= count
        if len(self.tail) >= count:
            del self.tail[len(self.tail) - count:]
        else:
            del self.head[max(0, len(self.head) - count):]

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
    _write_frame(proto_out, {'ready': True, 'version': sys.version.split()[0]})
    counter = 0
    driver_pid = os.getpid()
    while True:
        try:
            request = _read_frame(proto_in)
        except (EOFError, OSError):
            os._exit(0)
        counter += 1
        capture.reset()
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', write_through=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', write_through=True)
        signal.signal(signal.SIGXCPU, _on_cpu_limit)
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        soft = min(hard, math.ceil(_cpu_used() + CONFIG['cpuSecondsPerCall']))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        error = None
        try:
            error = _run_cell(request['code'], namespace, counter)
            if os.getpid() != driver_pid:
                # A child forked by the code came back here: it must never answer.
                os._exit(0)
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:
                    pass
            os.dup2(write_end, 1)
            os.write(write_end, MARKER)
            capture.done.wait(2.0)
        except BaseException as late:
            error = (error or '') + 'interrupted: ' + repr(late)
        if os.getpid() != driver_pid:
            os._exit(0)
        # Between calls only the task's total CPU limit applies, so an idle REPL is never signalled.
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        except (ValueError, OSError):
            pass  # the code lowered the hard limit itself; its choice
        output, truncated = capture.text()
        _write_frame(proto_out, {'output': output, 'truncated': truncated, 'error': error})


main()
`;
