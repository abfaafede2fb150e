"""The program each scratchpad process runs: take cells from the parent, run them in one namespace, report back.

One module namespace lives as long as the process, so variables survive from cell to cell (the pad's working
memory). Everything a cell writes to stdout/stderr, including the output of subprocesses it starts, is streamed to
the parent while the cell runs. What a cell's threads print after the cell has ended, and whatever reaches the
output pipes while no cell runs, is sent marked ``late`` with the number of the cell it belongs to: it is never taken
for the output of the cell running then (see `CellThreads`). The process watches its parent and ends itself, with
everything it started, when the parent goes away.

It runs under the pad's own interpreter, possibly a virtual environment where anton_tui is not installed, so it
uses the standard library only and is started by file path: `python -u boot.py '<json config>'`. Its first act is
to fork: the parent stays as the pad's supervisor (`supervisor.py`), which owns and ends everything the pad starts.
"""

import builtins
import codecs
import contextlib
import faulthandler
import itertools
import json
import linecache
import logging
import os
import select
import signal
import sys
import threading
import time
import traceback
import types

BOOT_FILE = os.path.abspath(__file__)
TOP_LEVEL_AWAIT = 0x2000  # ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, without importing ast at start-up
CO_COROUTINE = 0x0080  # inspect.CO_COROUTINE
ERROR_MAX_CHARS = 20_000
LOGS_MAX_CHARS = 200_000
PROGRESS_MAX_CHARS = 2_000
LLM_PROMPT_MAX_CHARS = 4_000_000
LLM_PING_SECONDS = 10.0
PARENT_CHECK_SECONDS = 0.5
RESERVE_BYTES = 2 * 1024 * 1024
FORWARDER_STACK_BYTES = 256 * 1024


def _load_sibling(name):
    """A standard-library-only module next to this file (anton_tui may not be importable here)."""
    import importlib.util

    path = os.path.join(os.path.dirname(BOOT_FILE), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_anton_scratchpad_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


protocol = _load_sibling("protocol")
output_guard = _load_sibling("output_guard")


def die():
    """End this process and everything it started (it leads its own process group)."""
    try:
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpid(), signal.SIGKILL)
    finally:
        os._exit(0)


class Channel:
    """Messages to the parent. The main thread and the output thread both send, so writes are serialised."""

    def __init__(self, fd):
        self._fd = fd
        self._lock = threading.Lock()

    def send(self, message):
        data = memoryview(protocol.encode(message))
        with self._lock:
            try:
                while data:
                    data = data[os.write(self._fd, data) :]
            except OSError:  # the parent is gone
                die()


class Inbox:
    """Messages from the parent: commands for the main loop, replies for whichever thread waits on the LLM.

    One thread at a time reads the pipe; what it reads for another thread is parked and that thread woken."""

    def __init__(self, fd):
        self._fd = fd
        self._buffer = bytearray()
        self._cond = threading.Condition()
        self._reading = False
        self._closed = False
        self._commands = []
        self._replies = {}

    def wait_for(self, key, timeout=None):
        """`key` is "command" or an LLM request id. Returns the message, or None after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                message = self._take(key)
                if message is not None:
                    return message
                if self._closed:
                    raise EOFError
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                if self._reading:
                    self._cond.wait(remaining)
                    continue
                self._reading = True
                self._cond.release()
                try:
                    line = self._read_line(remaining)
                finally:
                    self._cond.acquire()
                    self._reading = False
                    self._cond.notify_all()
                if line == b"":
                    self._closed = True
                elif line is not None:
                    self._park(protocol.decode(line))

    def _take(self, key):
        if key == "command":
            return self._commands.pop(0) if self._commands else None
        return self._replies.pop(key, None)

    def _park(self, message):
        if message["op"] == protocol.LLM_REPLY:
            self._replies[message.get("id")] = message
        else:
            self._commands.append(message)

    def _read_line(self, timeout):
        """A complete line, b"" at end of input, or None if `timeout` passed first."""
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                return line
            if timeout is not None and not readable([self._fd], timeout):
                return None
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                return b""
            self._buffer += chunk


def readable(fds, timeout):
    """Those of `fds` with something to read (or at their end) within `timeout` seconds. Through poll, not select:
    the pipes a pad is handed keep the numbers they had in the app, past 1024 in an app holding many files open, and
    select cannot watch those."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _ in poller.poll(max(timeout, 0) * 1000)]


class CellState:
    index = 0
    running = False


class CellThreads:
    """Knows which cell started each thread, so that what a thread prints after its cell ended is not taken for the
    output of the cell running then.

    A thread started while a cell runs (or by a thread that belongs to a cell) belongs to that cell; a worker of a
    thread pool (`concurrent.futures`, what `asyncio.to_thread` uses) belongs to none, as it runs whatever each cell
    hands it, and so does the main thread. `route` is what `sys.stdout`/`sys.stderr` call for every write: a write
    from a thread whose cell has ended is sent to the parent at once as late output of that cell."""

    POOL_MODULE = "concurrent.futures.thread"

    def __init__(self, state, channel):
        self.state, self.channel = state, channel
        self._start = threading.Thread.start
        threads = self

        def start(thread, *args, **kwargs):
            threads.tag(thread)
            return threads._start(thread, *args, **kwargs)

        threading.Thread.start = start  # type: ignore[method-assign,assignment]  # every thread a cell starts gets its tag

    def tag(self, thread):
        # Thread keeps its target in `_target` (CPython's threading): a pool's worker threads run `_worker` of
        # concurrent.futures.thread; they serve every cell, so they are left untagged.
        target = getattr(thread, "_target", None)
        if getattr(target, "__module__", "") == self.POOL_MODULE:
            return
        creator = getattr(threading.current_thread(), "anton_cell", None)
        if creator is not None:
            thread.anton_cell = creator
        elif self.state.running:
            thread.anton_cell = self.state.index

    def route(self, stream, text):
        """Send `text` as late output when the writing thread's cell has ended; False when it is ordinary output."""
        cell = getattr(threading.current_thread(), "anton_cell", None)
        if cell is None or (self.state.running and cell == self.state.index):
            return False
        self.channel.send({"op": protocol.OUT, "cell": cell, "stream": stream, "text": text, "late": True})
        return True


class OutsideWatch:
    """Notices, with an audit hook, when a running cell opens a network connection or reads a file outside the
    workspace (and outside Python's own folders), and tells the parent at once: `outside {cell, kind, target}`.
    What a cell's subprocesses do is not seen."""

    LIMIT = 20  # per cell
    SYSTEM_FILES = frozenset(
        f"/etc/{name}/"
        for name in ("mime.types", "localtime", "hosts", "resolv.conf", "nsswitch.conf", "gai.conf", "host.conf")
    )

    def __init__(self, channel, state, workspace):
        self.channel, self.state = channel, state
        self.active = False
        self.seen = set()
        inside = [workspace, sys.prefix, sys.base_prefix, sys.exec_prefix, "/dev", "/proc", "/sys"]
        inside += [p for p in sys.path if p and os.path.isabs(p)]
        inside += ["/usr/share/zoneinfo", "/etc/ssl", "/usr/lib/ssl"]  # what the standard library reads by itself
        self.inside = tuple(os.path.join(os.path.normpath(p), "") for p in inside)
        self._busy = threading.local()

    def start_cell(self):
        self.seen = set()
        self.active = True

    def hook(self, event, args):
        if not self.active or getattr(self._busy, "on", False):
            return
        if event == "socket.connect":
            address = args[1] if len(args) > 1 else None
            if isinstance(address, tuple) and len(address) >= 2:
                self._report("network", f"{address[0]}:{address[1]}")
        elif event == "open":
            path, mode = args[0], args[1] if len(args) > 1 else "r"
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not isinstance(path, str) or (isinstance(mode, str) and any(c in mode for c in "wax+")):
                return
            full = os.path.join(os.path.normpath(os.path.join(os.getcwd(), path)), "")
            if not full.startswith(self.inside) and full not in self.SYSTEM_FILES:
                self._report("file", full.rstrip("/"))

    def _report(self, kind, target):
        if (kind, target) in self.seen or len(self.seen) >= self.LIMIT:
            return
        self.seen.add((kind, target))
        self._busy.on = True
        try:
            self.channel.send({"op": protocol.OUTSIDE, "cell": self.state.index, "kind": kind, "target": target})
        finally:
            self._busy.on = False


class OutputForwarder:
    """Reads the pipes behind fds 1 and 2 and sends what arrives to the parent as `out` messages.

    Also checks every half second that the parent is still there; if not, the whole process group ends."""

    def __init__(self, channel, state, streams):
        self.lock = threading.Lock()
        self._channel = channel
        self._state = state
        self._streams = streams
        self._decoders = {fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in streams}
        self._open = set(streams)  # a pipe at its end (every writer closed) is not watched any more
        for fd in streams:
            os.set_blocking(fd, False)

    def start(self):
        previous = threading.stack_size(FORWARDER_STACK_BYTES)  # a small stack leaves more room under the limit
        try:
            threading.Thread(target=self._run, name="scratchpad-output", daemon=True).start()
        finally:
            threading.stack_size(previous)

    def _run(self):
        parent = os.getppid()
        while True:
            ready = readable(self._open, PARENT_CHECK_SECONDS)
            if os.getppid() != parent:
                die()
            if ready:
                with self.lock:
                    for fd in ready:
                        self._pump(fd, max_reads=8)

    def drain(self):
        """Forward whatever is already written. The caller holds `lock`."""
        for fd in list(self._open):
            self._pump(fd, max_reads=64)

    def _pump(self, fd, max_reads):
        for _ in range(max_reads):
            try:
                data = os.read(fd, protocol.OUTPUT_CHUNK_BYTES)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._open.discard(fd)
                return
            text = self._decoders[fd].decode(data)
            if text:
                message = {"op": protocol.OUT, "cell": self._state.index, "stream": self._streams[fd], "text": text}
                if not self._state.running:
                    message["late"] = True  # written after the last cell ended (a thread or a process it left)
                self._channel.send(message)


class CellLogs(logging.Handler):
    """Log records of INFO and above, collected per cell as `name: message` lines."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        self.reset()

    def reset(self):
        self._lines = []
        self._size = 0
        self._dropped = 0

    def emit(self, record):
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        if self._size < LOGS_MAX_CHARS:
            self._lines.append(line)
            self._size += len(line) + 1
        else:
            self._dropped += 1

    def value(self):
        text = "\n".join(self._lines)
        if self._dropped:
            text += f"\n... ({self._dropped} more log records were not kept)"
        return text


class Reserve:
    """A little memory set aside so a cell that hit the memory limit can still be reported."""

    def __init__(self):
        self._block: bytearray | None = bytearray(RESERVE_BYTES)

    def release(self):
        self._block = None

    def restore(self):
        if self._block is None:
            with contextlib.suppress(MemoryError):
                self._block = bytearray(RESERVE_BYTES)


class LanguageModel:
    """What `get_llm()` returns: the coding model, reached through the parent process."""

    def __init__(self, runtime):
        self._runtime = runtime

    def complete(self, prompt, *, system=None, max_tokens=1024):
        """Send `prompt` (with an optional system prompt) to the model and return its text answer."""
        prompt = str(prompt)
        if len(prompt) > LLM_PROMPT_MAX_CHARS:
            raise ValueError(
                f"get_llm().complete(): the prompt has {len(prompt):,} characters; keep it under "
                f"{LLM_PROMPT_MAX_CHARS:,}."
            )
        request = {
            "op": "complete",
            "prompt": prompt,
            "system": None if system is None else str(system),
            "max_tokens": int(max_tokens),
        }
        reply = self._runtime.ask_parent(request)
        return str(reply.get("text", "")) if isinstance(reply, dict) else str(reply)

    def __repr__(self):
        return "<scratchpad language model (coding model, through the parent process)>"


class Runtime:
    def __init__(self, config, channel, inbox, forwarder, state, logs, outputs, watch=None):
        self.watch = watch
        self.config = config
        self.outputs = outputs
        self.channel = channel
        self.inbox = inbox
        self.forwarder = forwarder
        self.state = state
        self.logs = logs
        self.reserve = Reserve()
        self._request_ids = itertools.count(1)
        self._loop = None
        module = types.ModuleType("__main__", "Scratchpad namespace")
        module.__dict__.update(__builtins__=builtins, progress=self.progress, get_llm=self.get_llm)
        self.namespace = module.__dict__
        sys.modules["__main__"] = module
        vars(builtins).update(progress=self.progress, get_llm=self.get_llm)

    # --- what cells see -------------------------------------------------------------------------------------
    def progress(self, message=""):
        """Tell the user what the cell is doing; also keeps a long cell from being stopped as silent."""
        self._flush_std()
        with self.forwarder.lock:
            self.forwarder.drain()
            text = str(message)[:PROGRESS_MAX_CHARS]
            self.channel.send({"op": protocol.PROGRESS, "cell": self.state.index, "message": text})

    def get_llm(self):
        """The coding model, as an object with `complete(prompt, *, system=None, max_tokens=1024) -> str`."""
        if not self.config.get("llm"):
            raise RuntimeError(
                "get_llm() is not available in this scratchpad: no language model is connected to it "
                "(configure a coding model for the session)."
            )
        return LanguageModel(self)

    def ask_parent(self, request):
        request_id = next(self._request_ids)
        started = time.monotonic()
        self._flush_std()
        self.channel.send({"op": protocol.LLM_REQUEST, "cell": self.state.index, "id": request_id, "request": request})
        while True:
            try:
                reply = self.inbox.wait_for(request_id, timeout=LLM_PING_SECONDS)
            except EOFError:
                die()
                raise  # not reached: die() ends the process
            if reply is not None:
                break
            self.progress(f"waiting for the language model ({time.monotonic() - started:.0f}s)")
        if reply.get("error"):
            raise RuntimeError(f"get_llm(): the language model call failed: {reply['error']}")
        return reply.get("reply") or {}

    # --- running cells ----------------------------------------------------------------------------------------
    def serve(self):
        while True:
            try:
                message = self.inbox.wait_for("command")
            except EOFError:
                return
            if message["op"] == protocol.EXEC:
                self.run_cell(int(message["cell"]), str(message["code"]), str(message.get("nonce", "")))

    def run_cell(self, index, code, nonce):
        """Run one cell and send its result, which carries the cell's nonce: the parent takes no result without it,
        so text a cell writes to the message pipe itself cannot pass for one."""
        with self.forwarder.lock:
            self.forwarder.drain()  # what came in between cells goes out as late output of the cell before
            self.state.index = index
            self.state.running = True
        self.logs.reset()
        filename = f"<cell {index}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        error = None
        memory_error = False
        if self.watch is not None:
            self.watch.start_cell()
        try:
            compiled = compile(code, filename, "exec", TOP_LEVEL_AWAIT, True)
            outcome = eval(compiled, self.namespace)
            if compiled.co_flags & CO_COROUTINE:
                self._event_loop().run_until_complete(outcome)
        except MemoryError as exc:
            self.reserve.release()
            memory_error = True
            error = self._memory_message() + "\n\n" + self._format_exception(exc, filename)
        except SystemExit as exc:
            error = (
                f"SystemExit: the cell called exit({exc.code!r}). The scratchpad keeps running and its "
                f"variables are kept; there is no need to exit."
            )
        except BaseException as exc:  # the cell's own failure, reported to the model
            error = self._format_exception(exc, filename)
        self._flush_std()
        if self.watch is not None:
            self.watch.active = False
        broken = None
        try:
            notice = self.outputs.repair()
        except OSError as exc:
            broken = exc
            notice = (
                f"This cell closed the scratchpad's output for good ({exc}), so the scratchpad process "
                f"restarts: variables from earlier cells are gone."
            )
        with self.forwarder.lock:
            self.forwarder.drain()
            self.channel.send(
                {
                    "op": protocol.RESULT,
                    "cell": index,
                    "nonce": nonce,
                    "error": error,
                    "logs": self.logs.value(),
                    "memory_error": memory_error,
                    "notice": notice,
                }
            )
            self.state.running = False
        self.reserve.restore()
        if broken is not None:
            die()

    def _event_loop(self):
        if self._loop is None or self._loop.is_closed():
            import asyncio

            self._loop = asyncio.new_event_loop()
        return self._loop

    def _memory_message(self):
        limit = self.config.get("memory_limit_mb")
        if limit:
            return (
                f"MemoryError: the cell needed more memory than this scratchpad may use ({limit} MB, setting "
                f"cell_memory_limit_mb). Work on the data in smaller pieces or free big variables with del; "
                f"the scratchpad is still running."
            )
        return "MemoryError: the machine ran out of memory for this cell; the scratchpad is still running."

    @staticmethod
    def _format_exception(exc, filename):
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != filename:
            tb = tb.tb_next
        text = "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()
        if len(text) > ERROR_MAX_CHARS:
            head = ERROR_MAX_CHARS // 4
            text = text[:head] + "\n... (error text cut) ...\n" + text[-(ERROR_MAX_CHARS - head) :]
        return text

    @staticmethod
    def _flush_std():
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()


def _apply_memory_limit(limit_mb):
    if not limit_mb:
        return
    try:
        import resource
    except ImportError:  # not available on this platform
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = int(limit_mb) * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    # The hard limit too: a cell may lower it further but never lift it (only root could).
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def split_off_supervisor(control, fds, max_processes=None):
    """Fork before anything else runs: the parent stays behind as the pad's supervisor (and never returns from
    here), the child returns and becomes the pad process, leader of its own process group."""
    supervisor = _load_sibling("supervisor")
    # Before the fork, so no orphan of a cell can reach init. Without it (not Linux, or refused) the supervisor
    # still ends the pad's process group and whatever /proc shows below it.
    supervisor.become_subreaper()
    worker = os.fork()
    if worker:
        try:
            os.setpgid(worker, worker)
        except OSError:  # the child did it first, or is already gone
            pass
        release = [fd for name, fd in fds.items() if name != "messages"]
        capped = protocol.encode({"op": protocol.CAPPED, "limit": max_processes}) if max_processes else b""
        supervisor.supervise(worker, control, release, max_processes, fds["messages"], capped)
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    os.close(control)


def main():
    config = json.loads(sys.argv[1])
    fds = config["fds"]
    split_off_supervisor(config["control"], fds, config.get("max_processes"))
    for fd in fds.values():
        os.set_inheritable(fd, False)  # private to this process, not to the subprocesses a cell starts
    # Commands arrive on the original stdin; move them aside so a cell (or its subprocesses) reads nothing there.
    inbox_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    # fds 1 and 2 are already the output pipes; the guard makes sys.stdout/sys.stderr for them and keeps them usable.
    outputs = output_guard.OutputGuard()
    faulthandler.enable(file=sys.stderr)

    workspace = config.get("workspace") or os.getcwd()
    sys.path[0] = workspace
    sys.argv = ["scratchpad"]

    channel = Channel(fds["messages"])
    state = CellState()
    outputs.route = CellThreads(state, channel).route
    forwarder = OutputForwarder(channel, state, {fds["stdout"]: "stdout", fds["stderr"]: "stderr"})
    logs = CellLogs()
    root = logging.getLogger()
    root.addHandler(logs)
    root.setLevel(logging.INFO)
    watch = OutsideWatch(channel, state, os.path.abspath(workspace))
    sys.addaudithook(watch.hook)  # cannot be removed by a cell; it only reports, never blocks
    runtime = Runtime(config, channel, Inbox(inbox_fd), forwarder, state, logs, outputs, watch)
    forwarder.start()
    _apply_memory_limit(config.get("memory_limit_mb"))
    channel.send(
        {"op": protocol.READY, "pid": os.getpid(), "python": sys.version.split()[0], "executable": sys.executable}
    )
    runtime.serve()
    die()


if __name__ == "__main__":
    main()
