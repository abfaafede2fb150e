"""Runs a command the user typed after `!` in the workspace folder and streams its output; keeps what the agent
should see of it.

`run_shell(command, cwd)` starts `/bin/sh -c command` in its own process group (stdin closed, stderr merged into
stdout) and yields `ShellOutput` pieces as they arrive, then one `ShellFinished`. Closing the iterator (a cancel)
ends the whole process group: SIGTERM, then SIGKILL after `KILL_AFTER` seconds. `ShellRecord.note` is the
command and its output as the agent reads them in the next turn: the output cut to `NOTE_CAP` characters (head and
tail kept) and passed through the redactor.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

NOTE_CAP = 8_000  # characters of output the agent sees per command
KILL_AFTER = 1.0  # seconds between SIGTERM and SIGKILL
READ_SIZE = 4096


@dataclass(frozen=True, slots=True)
class ShellStarted:
    command: str
    cwd: str


@dataclass(frozen=True, slots=True)
class ShellOutput:
    text: str


@dataclass(frozen=True, slots=True)
class ShellFinished:
    """`exit_code` is the process's status (a negative number for a signal); `cancelled` when the user stopped it."""

    command: str
    exit_code: int | None
    cancelled: bool
    duration: float


ShellEvent = ShellStarted | ShellOutput | ShellFinished


@dataclass(frozen=True)
class ShellRecord:
    """One command the user ran, as the agent will see it: command, exit status, output (already capped)."""

    command: str
    output: str
    exit_code: int | None
    cancelled: bool = False

    @property
    def status(self) -> str:
        if self.cancelled:
            return "stopped by the user"
        return f"exit code {self.exit_code}"

    def note(self, redact: Callable[[str], str] | None = None) -> str:
        output = redact(self.output) if redact is not None else self.output
        command = redact(self.command) if redact is not None else self.command
        body = output if output.strip() else "(no output)"
        return (
            f"[The user ran a shell command in the workspace folder ({self.status}). Command and output, for "
            f"reference:]\n$ {command}\n{body}"
        )


def cap_output(text: str, cap: int = NOTE_CAP) -> str:
    """`text` cut to about `cap` characters: the first third and the last two thirds, with a line saying how much
    was left out."""
    if len(text) <= cap:
        return text
    head, tail = cap // 3, cap - cap // 3
    return f"{text[:head]}\n[... {len(text) - cap:,} characters left out ...]\n{text[-tail:]}"


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        _kill_group(process.pid, signal.SIGKILL)  # leftovers of the group, if any
        return
    _kill_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), KILL_AFTER)
    _kill_group(process.pid, signal.SIGKILL)
    if process.returncode is None:
        await process.wait()


async def run_shell(command: str, cwd: Path, *, env: dict[str, str] | None = None) -> AsyncIterator[ShellEvent]:
    """The events of one command; closing the iterator early stops the command and everything it started."""
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", command,
        cwd=str(cwd), env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    yield ShellStarted(command, str(cwd))
    finished = False
    try:
        assert process.stdout is not None
        decoder = _Decoder()
        while chunk := await process.stdout.read(READ_SIZE):
            if text := decoder.feed(chunk):
                yield ShellOutput(text)
        if text := decoder.feed(b"", final=True):
            yield ShellOutput(text)
        code = await process.wait()
        finished = True
        _kill_group(process.pid, signal.SIGKILL)  # background children that kept running
        yield ShellFinished(command, code, False, time.monotonic() - started)
    finally:
        if not finished:
            await asyncio.shield(_stop(process))


class _Decoder:
    """UTF-8 across chunk boundaries; bytes that are not UTF-8 become U+FFFD."""

    def __init__(self) -> None:
        import codecs

        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, *, final: bool = False) -> str:
        return self._decoder.decode(data, final)
