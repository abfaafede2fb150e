"""Keeps a pad process's standard output and error usable: a cell that closes them (`sys.stdout.close()`,
`os.close(1)`) or points them elsewhere gets them back before the next cell, and is told.

fds 1 and 2 are the pipes the pad's output travels on. A spare copy of each is kept on another descriptor, so the
pipe stays open whatever a cell closes, and `repair()` puts it back in place. Every write to `sys.stdout` and
`sys.stderr` is first offered to `route` (when set): what it takes (a thread's output after its cell ended) does not
go down the pipe. Runs inside the pad process with the standard library only (loaded from its file path by
`boot.py`).
"""

import io
import os
import sys

NAMES = {1: "stdout", 2: "stderr"}


class CellText(io.TextIOWrapper):
    """A text stream on fd 1 or 2 whose writes are first offered to the guard's `route`."""

    def __init__(self, binary, name, guard):
        super().__init__(binary, encoding="utf-8", errors="backslashreplace", line_buffering=True)
        self._name, self._guard = name, guard

    def write(self, text):
        route = self._guard.route
        if route is not None and isinstance(text, str) and route(self._name, text):
            return len(text)
        return super().write(text)


def text_stream(fd, guard=None):
    """Line-buffered like a terminal: a line reaches the parent in one piece, flush() sends a partial line."""
    binary = io.BufferedWriter(io.FileIO(fd, "w", closefd=False))
    if guard is not None:
        return CellText(binary, NAMES[fd], guard)
    return io.TextIOWrapper(binary, encoding="utf-8", errors="backslashreplace", line_buffering=True)


def _identity(fd):
    try:
        stat = os.fstat(fd)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


class OutputGuard:
    def __init__(self):
        self.route = None  # (stream name, text) -> True when it took the text; see the module docstring
        self._pipes = {fd: _identity(fd) for fd in NAMES}
        self._spares = {fd: os.dup(fd) for fd in NAMES}  # not inherited by the subprocesses a cell starts
        for fd in NAMES:
            self._install_stream(fd)

    def _install_stream(self, fd):
        stream = text_stream(fd, self)
        if fd == 1:
            sys.stdout = sys.__stdout__ = stream  # type: ignore[misc]  # replaced on purpose: the cells' own stream
        else:
            sys.stderr = sys.__stderr__ = stream  # type: ignore[misc]  # replaced on purpose: the cells' own stream

    def repair(self):
        """Put back what a cell closed or moved. Returns a sentence for the model ("" when nothing was wrong);
        raises OSError when a stream cannot be restored (its spare was closed too)."""
        closed: list[str] = []
        moved: list[str] = []
        for fd, name in NAMES.items():
            stream = sys.stdout if fd == 1 else sys.stderr
            identity = _identity(fd)
            if identity != self._pipes[fd]:
                if _identity(self._spares[fd]) != self._pipes[fd]:
                    raise OSError(f"the scratchpad's {name} pipe was closed for good")
                os.dup2(self._spares[fd], fd)
                (closed if identity is None else moved).append(name)
                self._install_stream(fd)  # a fresh buffer: what failed to be written is not sent later
            elif stream is None or getattr(stream, "closed", False):
                closed.append(name)
                self._install_stream(fd)
            if _identity(self._spares[fd]) != self._pipes[fd]:
                self._spares[fd] = os.dup(fd)  # the cell closed the spare: make another while fd 1/2 is intact
        if not closed and not moved:
            return ""
        done = []
        if closed:
            done.append(f"closed the scratchpad's {' and '.join(closed)}")
        if moved:
            done.append(f"pointed the scratchpad's {' and '.join(moved)} elsewhere")
        return (
            f"This cell {' and '.join(done)}; the scratchpad put {'them' if len(closed) + len(moved) > 1 else 'it'}"
            f" back, so the cells that follow print as usual."
        )
