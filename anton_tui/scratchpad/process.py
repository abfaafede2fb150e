"""One running scratchpad: starting its processes, exchanging protocol messages with them, and ending them together
with everything they started.

Two processes per pad: `boot.py` starts and forks at once; its child is the pad process that runs the cells, and
the parent stays as the pad's supervisor (`supervisor.py`). The supervisor owns every descendant of the pad and
kills them all when it stops; it stops when this side writes to its control pipe, when this side dies (the control
pipe closes, even on SIGKILL), or when the pad process ends. It then exits with the pad process's status, so the
process this side started and waits for is the supervisor, and its exit status tells how the pad process ended.

Pipes, all made here: the pad process's stdin carries commands; a private pipe carries its messages back; its fds
1 and 2 are two more pipes. The pad process itself reads those output pipes and forwards what it reads as messages,
so output and results stay in order; this side keeps a copy of their read ends only to collect what was still in
them when the process died, so a crash does not swallow the last lines it printed.

Every live supervisor is remembered, and an `atexit` hook stops whatever is left when the app exits without
closing its pads. Should a supervisor not answer, the process groups of both processes are killed instead.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anton_tui.scratchpad import protocol

log = logging.getLogger(__name__)

BOOT_PATH = Path(__file__).with_name("boot.py")
KILL_WAIT_SECONDS = 5.0
SALVAGE_MAX_BYTES = 1024 * 1024

MessageHandler = Callable[["PadProcess", dict[str, Any]], None]
CloseHandler = Callable[["PadProcess"], None]


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class _Control:
    """This side's end of a supervisor's control pipe: one byte asks it to end the pad; closing it does too."""

    def __init__(self, fd: int, supervisor_pid: int) -> None:
        self.fd: int | None = fd
        self.supervisor_pid = supervisor_pid
        self.worker_pid: int | None = None

    def stop(self) -> None:
        if self.fd is None:
            return
        try:
            os.write(self.fd, b"x")
        except OSError:  # the supervisor is already gone, or the pipe is full of earlier requests
            pass

    def force(self) -> None:
        """The supervisor did not answer: kill both process groups (misses children that left them)."""
        kill_group(self.supervisor_pid)
        if self.worker_pid is not None:
            kill_group(self.worker_pid)

    def close(self) -> None:
        _live.discard(self)
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


_live: set[_Control] = set()


@atexit.register
def _stop_leftover_pads() -> None:
    for control in list(_live):
        control.stop()
        control.close()


class ScratchpadStartError(RuntimeError):
    pass


class PadProcess:
    """A started pad that has said it is ready. Messages go to `on_message`; `on_closed` runs once at the end,
    after any output left in the pipes has been delivered as `out` messages. `pid` is the pad process (the one
    running the cells); `supervisor_pid` the process that owns it."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        control: _Control,
        messages: asyncio.StreamReader,
        transport: asyncio.BaseTransport,
        output_fds: dict[int, str],
        ready: dict[str, Any],
        on_message: MessageHandler,
        on_closed: CloseHandler,
    ) -> None:
        self._process = process
        self._control = control
        self._messages = messages
        self._transport = transport
        self._output_fds = output_fds
        self.supervisor_pid = process.pid
        self.pid = int(ready.get("pid") or 0)
        control.worker_pid = self.pid or None
        self.python_version = str(ready.get("python", ""))
        self.executable = str(ready.get("executable", ""))
        self.stopped_on_purpose = False
        self.capped: int | None = None  # the cap on processes, when the supervisor ended the pad for passing it
        self.closed = asyncio.Event()
        self._on_message = on_message
        self._on_closed = on_closed
        self._reader = asyncio.get_running_loop().create_task(self._read_messages())

    @classmethod
    async def spawn(
        cls,
        python: Path,
        *,
        workspace: Path,
        config: dict[str, Any],
        env: dict[str, str],
        on_message: MessageHandler,
        on_closed: CloseHandler,
        start_timeout: float,
    ) -> PadProcess:
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        msg_read, msg_write = os.pipe()
        control_read, control_write = os.pipe()
        output_fds = {out_read: "stdout", err_read: "stderr"}
        config = {
            **config,
            "fds": {"stdout": out_read, "stderr": err_read, "messages": msg_write},
            "control": control_read,
        }
        try:
            process = await asyncio.create_subprocess_exec(
                str(python),
                "-u",
                str(BOOT_PATH),
                json.dumps(config),
                stdin=asyncio.subprocess.PIPE,
                stdout=out_write,
                stderr=err_write,
                pass_fds=(out_read, err_read, msg_write, control_read),
                cwd=str(workspace),
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            for fd in (out_read, err_read, msg_read, control_write):
                os.close(fd)
            raise ScratchpadStartError(f"could not run {python}: {exc}") from exc
        finally:
            for fd in (out_write, err_write, msg_write, control_read):
                os.close(fd)
        control = _Control(control_write, process.pid)
        _live.add(control)
        for fd in output_fds:
            os.set_blocking(fd, False)
        loop = asyncio.get_running_loop()
        messages = asyncio.StreamReader(limit=protocol.MAX_LINE_BYTES)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(messages),
            open(msg_read, "rb", buffering=0),  # noqa: ASYNC230, SIM115 (a pipe: opening it does not block; the transport closes it)
        )
        ready: dict[str, Any] | None = None
        problem = ""
        try:
            line = await asyncio.wait_for(messages.readline(), start_timeout)
            ready = protocol.decode(line) if line else None
        except TimeoutError:
            problem = f"no answer within {start_timeout:g}s"
        except ValueError:
            ready = None
        except BaseException:
            transport.close()
            await _reap(process, control)
            _close_all(output_fds)
            raise
        if not ready or ready.get("op") != protocol.READY:
            transport.close()
            await _reap(process, control)
            leftovers = "".join(text for _, text in _salvage(output_fds)).strip()
            _close_all(output_fds)
            problem = problem or describe_exit(process.returncode)
            raise ScratchpadStartError(
                f"the scratchpad process ({python}) did not start ({problem})"
                + (f":\n{leftovers[-3000:]}" if leftovers else "")
            )
        return cls(process, control, messages, transport, output_fds, ready, on_message, on_closed)

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def exit_description(self) -> str:
        if self.capped is not None:
            return (f"stopped: it ran more than {self.capped} processes, the most one scratchpad may run; every "
                    "process it started was ended")  # fmt: skip
        return describe_exit(self._process.returncode)

    async def send(self, message: dict[str, Any]) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(protocol.encode(message))
        await stdin.drain()

    def kill(self) -> None:
        """End the pad process and everything it started, now; `closed` is set once the pieces are collected."""
        self._control.stop()

    async def terminate(self) -> None:
        self.stopped_on_purpose = True
        self.kill()
        try:
            await asyncio.wait_for(self.closed.wait(), KILL_WAIT_SECONDS)
        except TimeoutError:
            log.warning("scratchpad process %s did not end within %ss", self.pid, KILL_WAIT_SECONDS)

    async def _read_messages(self) -> None:
        try:
            while True:
                try:
                    line = await self._messages.readline()
                except ValueError:
                    log.warning("scratchpad process %s sent an over-long message; stopping it", self.pid)
                    break
                if not line:
                    break
                try:
                    message = protocol.decode(line)
                except ValueError:
                    log.warning("scratchpad process %s sent an unreadable message: %r", self.pid, line[:120])
                    continue
                self._deliver(message)
        finally:
            # The wire is closed: make sure nothing of the group survives, collect the exit status, then hand
            # over whatever output the child had not forwarded yet.
            self._transport.close()
            await _reap(self._process, self._control)
            for stream, text in _salvage(self._output_fds):
                self._deliver({"op": protocol.OUT, "stream": stream, "text": text})
            _close_all(self._output_fds)
            self.closed.set()
            try:
                self._on_closed(self)
            except Exception:
                log.exception("scratchpad close handler failed")

    def _deliver(self, message: dict[str, Any]) -> None:
        if message.get("op") == protocol.CAPPED:
            self.capped = int(message.get("limit") or 0)
            return
        try:
            self._on_message(self, message)
        except Exception:
            log.exception("scratchpad message handler failed")


def _salvage(output_fds: dict[int, str]) -> list[tuple[str, str]]:
    """What is still sitting in the output pipes (never blocks)."""
    pieces = []
    for fd, stream in output_fds.items():
        data = bytearray()
        while len(data) < SALVAGE_MAX_BYTES:
            try:
                chunk = os.read(fd, protocol.OUTPUT_CHUNK_BYTES)
            except OSError:  # empty (EAGAIN) or already closed
                break
            if not chunk:
                break
            data += chunk
        if data:
            pieces.append((stream, data.decode("utf-8", "replace")))
    return pieces


def _close_all(fds: dict[int, str]) -> None:
    for fd in list(fds):
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()


async def _reap(process: asyncio.subprocess.Process, control: _Control) -> None:
    """Have the supervisor end everything and wait for it; kill the groups if it does not answer in time."""
    control.stop()
    try:
        await asyncio.wait_for(process.wait(), KILL_WAIT_SECONDS)
    except TimeoutError:
        log.warning("scratchpad supervisor %s did not answer; killing its process groups", process.pid)
        control.force()
        try:
            await asyncio.wait_for(process.wait(), KILL_WAIT_SECONDS)
        except TimeoutError:
            log.warning("scratchpad supervisor %s could not be collected", process.pid)
    control.close()


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"
