"""Starting `anton-tui serve` as a user does, in its own process, for the serving tests."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

URL = re.compile(r"https?://\S+")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def children(pid: int) -> set[int]:
    """The processes `pid` started (through their `/bin/sh -c`, as textual-serve starts them) and theirs."""
    found: set[int] = set()
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return found
    for task in tasks:
        try:
            direct = {int(child) for child in (task / "children").read_text().split()}
        except FileNotFoundError:
            continue
        for child in direct:
            found |= {child} | children(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@dataclass
class Served:
    """A running `anton-tui serve`: its process, the address it printed, and what it printed."""

    process: subprocess.Popen[str]
    url: str
    output: list[str] = field(default_factory=list)
    started: float = 0.0

    @property
    def tab_apps(self) -> set[int]:
        """The tabs' anton-tui processes (not their shells, nor a child forked from the server that has not yet
        started its own program: until then it has the server's command line and environment)."""
        try:
            server = Path(f"/proc/{self.process.pid}/cmdline").read_bytes()
        except FileNotFoundError:
            return set()  # the server has ended (and been waited for): it has no children
        apps = set()
        for pid in children(self.process.pid):
            try:
                line = Path(f"/proc/{pid}/cmdline").read_bytes()
            except FileNotFoundError:
                continue
            command = line.split(b"\0")
            if b"anton_tui" in command and command[0] != b"/bin/sh" and line != server:
                apps.add(pid)
        return apps

    def stop(self, timeout: float = 30) -> int:
        """Ctrl+C, as a user stops it; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


def start_serve(*args: str, cwd: Path, timeout: float = 60, env: dict[str, str] | None = None) -> Served:
    """`anton-tui serve ARGS`, returned once it has printed the address to open."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "anton_tui", "serve", *args],
        cwd=cwd,
        env=env or os.environ.copy(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()
    output: list[str] = []
    while time.monotonic() - started < timeout:
        try:
            line = lines.get(timeout=max(0.0, timeout - (time.monotonic() - started)))
        except queue.Empty:
            break
        if not line:
            break
        output.append(line)
        if found := URL.search(line):
            threading.Thread(target=_keep, args=(lines, output), daemon=True).start()
            return Served(process, found.group(0), output, started)
    process.kill()
    process.wait()
    raise AssertionError(f"anton-tui serve printed no address: {''.join(output)!r}")


def _read_lines(stream: IO[str], lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)
    lines.put("")


def _keep(lines: queue.Queue[str], output: list[str]) -> None:
    while line := lines.get():
        output.append(line)
