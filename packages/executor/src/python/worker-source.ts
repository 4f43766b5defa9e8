/**
 * The REPL process of the sandbox (Python): the only process that runs the user's code.
 * Its supervisor forks it and hands it four descriptors, nothing else: /dev/null, the write
 * end of an output pipe (its fds 1 and 2), the read side of a request socket, and its end of
 * an answer socket. It never holds the host's channel. Everything it sends is only a claim:
 * the supervisor decides what counts (see `supervisor-source.ts`).
 *
 * Every call writes into a pipe of its own: the main thread creates it when it starts the
 * call and hands the read end to the supervisor, which counts what comes out of it as that
 * call's output (late output once the call is over). Threads of an earlier call that are
 * still running when a call starts (the main thread counts them in /proc/self/task) are
 * kept on their own call's pipe: the main thread first takes a private copy of the fd table
 * (`unshare(CLONE_FILES)`, the one unshare the seccomp filter allows). The old threads keep the old table, so their
 * `print`, `os.write(1, ...)` and children write into their call's pipe.
 *
 * Part of the driver program (`driver-source.ts`); Python, kept as a string.
 */
export const PYTHON_WORKER_SOURCE = String.raw`
import ast, builtins, io, json, linecache, math, os, resource, signal, socket, sys, textwrap, traceback

DRIVER_FILE = '<agentflow-driver>'
CELL_PREFIX = '<cell-'
CLONE_FILES = 0x400
# One answer is one message on a SOCK_SEQPACKET socket: it must fit the socket's buffer.
MAX_ANSWER_BYTES = 100_000


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def read_exact(fd, count):
    chunks = []
    while count > 0:
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        count -= len(chunk)
    return b''.join(chunks)


def read_frame(fd):
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
    return json.loads(read_exact(fd, int(header[4:-1])))


class Output(io.TextIOBase):
    """sys.stdout and sys.stderr: one object for the REPL's life, no buffer of its own, so
    threads writing at once cannot corrupt it and every write reaches the writing thread's
    fd 1 or 2 at once, in order with os.write(1, ...) and child processes."""

    encoding = 'utf-8'
    errors = 'backslashreplace'

    def __init__(self, fd):
        self.fd = fd
        self.buffer = OutputBytes(fd)

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
        write_all(self.fd, text.encode('utf-8', 'backslashreplace'))
        return len(text)


class OutputBytes:
    def __init__(self, fd):
        self.fd = fd

    def write(self, data):
        write_all(self.fd, bytes(data))
        return len(data)

    def flush(self):
        pass


class CpuTimeExceeded(BaseException):
    pass


def set_limit(kind, value):
    if value is not None:
        resource.setrlimit(kind, (value, value))


def cpu_used():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def parse_cell(code, filename):
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


def format_exception(error, filename):
    if isinstance(error, SyntaxError) and error.filename == filename:
        return ''.join(traceback.format_exception_only(type(error), error))
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename != DRIVER_FILE]
    text = ''.join(traceback.format_exception_only(type(error), error))
    if frames:
        text = 'Traceback (most recent call last):\n' + ''.join(traceback.StackSummary.from_list(frames).format()) + text
    return text


def run_cell(code, namespace, counter):
    filename = CELL_PREFIX + str(counter) + '>'
    try:
        code, tree = parse_cell(code, filename)
    except SyntaxError as error:
        return format_exception(error, filename)
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
        return format_exception(error, filename)


def cut_text(text, limit):
    if text is None or len(text) <= limit:
        return text
    half = max(1, limit // 2)
    return text[:half] + '\n... [' + str(len(text) - 2 * half) + ' characters cut] ...\n' + text[-half:]


def send_answer(channel, message):
    while True:
        payload = json.dumps(message).encode()
        if len(payload) <= MAX_ANSWER_BYTES or not message.get('error'):
            break
        message['error'] = cut_text(message['error'], len(message['error']) // 2)
    channel.send(payload)


def unshare_files():
    unshare = getattr(os, 'unshare', None)  # Python 3.12+
    if unshare is not None:
        unshare(CLONE_FILES)
        return
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_FILES) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def new_output_pipe(channel, message, out_fd):
    """Starts a call on a pipe of its own: the read end goes to the supervisor with the
    call's id and nonce, the write end becomes fds 1 and 2. With threads of earlier calls
    still running (counted now, when no other code of this thread runs), this thread first
    takes a private copy of the fd table, so those threads keep the old table and the old pipe."""
    message = dict(message, pipe=True)
    if len(os.listdir('/proc/self/task')) > 1:
        message['separated'] = False
        try:
            unshare_files()
            message['separated'] = True
        except Exception as error:
            message['reason'] = str(error)
    read_end, write_end = os.pipe()
    try:
        socket.send_fds(channel, [json.dumps(message).encode()], [read_end])
    finally:
        os.close(read_end)
    try:
        os.close(out_fd)  # in a private table, only this thread's copy goes
    except OSError:
        pass  # the code closed it
    return write_end


def reap_children():
    # Children the code forked and that have ended (or that the host killed after the last call)
    # stay zombies of this process until it waits for them, and every zombie keeps its slot in
    # the sandbox user's process limit: a fork bomb's leftovers would refuse every later fork.
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def worker_main(config, requests_fd, answers_fd, out_fd, null_fd):
    channel = socket.socket(fileno=answers_fd)
    if os.getuid() == 0 and config.get('uid') is not None:
        os.setgroups([])
        os.setresgid(config['gid'], config['gid'], config['gid'])
        os.setresuid(config['uid'], config['uid'], config['uid'])
    os.chdir(config['cwd'])
    os.environ['PWD'] = config['cwd']
    # -I leaves the working folder off sys.path; a REPL has it, so modules written there import.
    sys.path.insert(0, config['cwd'])
    set_limit(resource.RLIMIT_AS, config['memoryBytes'])
    set_limit(resource.RLIMIT_NPROC, config['maxProcesses'])
    set_limit(resource.RLIMIT_FSIZE, config['maxFileBytes'])
    set_limit(resource.RLIMIT_CORE, 0)
    set_limit(resource.RLIMIT_NOFILE, config['maxOpenFiles'])
    total = config['cpuSecondsPerTask']
    resource.setrlimit(resource.RLIMIT_CPU, (total, total))
    # Only now does fd 2 leave the host's stderr: a failed setup is reported there.
    os.dup2(out_fd, 2)

    def on_cpu_limit(signum, frame):
        raise CpuTimeExceeded('CPU time limit of ' + str(config['cpuSecondsPerCall']) + ' s per call exceeded')

    namespace = {'__name__': '__main__', '__builtins__': builtins}
    stdout = Output(1)
    stderr = Output(2)
    error_limit = 2 * config['maxErrorChars']
    channel.send(json.dumps({'ready': True, 'version': sys.version.split()[0]}).encode())
    worker_pid = os.getpid()
    while True:
        try:
            request = read_frame(requests_fd)
        except (EOFError, OSError, ValueError):
            os._exit(0)
        reap_children()
        call = request['id']
        nonce = request['nonce']
        out_fd = new_output_pipe(channel, {'id': call, 'nonce': nonce}, out_fd)
        os.dup2(null_fd, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        sys.stdout = stdout
        sys.stderr = stderr
        signal.signal(signal.SIGXCPU, on_cpu_limit)
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        soft = min(hard, math.ceil(cpu_used() + config['cpuSecondsPerCall']))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        error = None
        try:
            error = run_cell(request['code'], namespace, call)
        except BaseException as late:
            error = (error or '') + 'interrupted: ' + repr(late)
        if os.getpid() != worker_pid:
            # A child forked by the code came back here: it must never answer.
            os._exit(0)
        # Between calls only the task's total CPU limit applies, so an idle REPL is never signalled.
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        except (ValueError, OSError):
            pass  # the code lowered the hard limit itself; its choice
        send_answer(channel, {'id': call, 'nonce': nonce, 'error': cut_text(error, error_limit)})
`;
