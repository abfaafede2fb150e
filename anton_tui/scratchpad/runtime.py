"""Scratchpads: named Python processes whose variables persist from cell to cell, and the manager that owns them.

`Scratchpad.execute` runs one cell, streams its output, progress and a heartbeat as events while it runs, and
enforces the cell's time budget: a cell that runs too long, stays silent too long, crashes its process or is
cancelled takes the process down with it, and the next cell starts a fresh one and says so.

Output written after a cell ended (by a thread it started, or a process it left running) belongs to that cell: it is
kept in the cell's `after_end` and shown to the user under that cell (a `CellOutput` of its number), and is never
part of what the model reads, neither as that cell's result nor as another cell's.

In the brain analogy the pads are working memory (dorsolateral prefrontal cortex): a few separate slots of live
state the executive reasons in. The runtime knows nothing of the observers that learn from cells; the tool layer
calls them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from anton_tui.scratchpad import protocol
from anton_tui.scratchpad.cell import Cell
from anton_tui.scratchpad.events import (
    CellFinished,
    CellHeartbeat,
    CellOutput,
    CellOutside,
    CellProgress,
    CellStarted,
    ScratchpadEvent,
    ScratchpadEventSink,
)
from anton_tui.scratchpad.formatting import compact_old_cells, dump_cells, format_cell_result, view_cells
from anton_tui.scratchpad.limits import CellBudget, ScratchpadLimits, pad_environment
from anton_tui.scratchpad.names import validate_pad_name
from anton_tui.scratchpad.process import KILL_WAIT_SECONDS, PadProcess, ScratchpadStartError
from anton_tui.scratchpad.venv import (
    InstallError,
    InvalidRequirementError,
    ensure_venv,
    existing_venv_python,
    pip_install,
    validate_requirements,
)

__all__ = [
    "EmptyCodeError",
    "InstallError",
    "InvalidRequirementError",
    "LLMBridge",
    "Scratchpad",
    "ScratchpadError",
    "ScratchpadLimits",
    "ScratchpadManager",
    "ScratchpadStartError",
    "format_cell_result",
]

log = logging.getLogger(__name__)

LLMBridge = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Stream = Literal["stdout", "stderr"]
LATE_OUTPUT_MAX_CHARS = 64_000  # per cell
LATE_HEADING = "\n[printed after the cell ended; not given to the model]\n"


class ScratchpadError(RuntimeError):
    pass


class EmptyCodeError(ScratchpadError, ValueError):
    """Raised by `execute` for empty or whitespace-only code; nothing runs and no cell is recorded."""


def _seconds(value: float) -> str:
    return format(round(value, 1), "g")


class _BoundedText:
    """Keeps the first `keep` characters of a stream and counts the rest."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._parts: list[str] = []
        self._kept = 0
        self.total = 0
        self.announced = False

    def add(self, text: str) -> str:
        self.total += len(text)
        room = self._keep - self._kept
        if room <= 0:
            return ""
        part = text[:room]
        self._parts.append(part)
        self._kept += len(part)
        return part

    @property
    def truncated(self) -> bool:
        return self.total > self._kept

    def value(self) -> str:
        return "".join(self._parts)


class _CellRun:
    """The live state of the one cell a pad is running."""

    def __init__(
        self, pad: str, cell: Cell, budget: CellBudget, limits: ScratchpadLimits, on_event: ScratchpadEventSink | None
    ) -> None:
        self.pad = pad
        self.cell = cell
        self.budget = budget
        self.inactivity = budget.inactivity
        self.after_progress = limits.inactivity_after_progress
        self.on_event = on_event
        self.keep = limits.output_keep_chars
        self.stdout = _BoundedText(self.keep)
        self.stderr = _BoundedText(self.keep)
        self.started = time.monotonic()
        self.last_activity = self.started
        self.llm_pending = 0
        self.process: PadProcess | None = None
        self.result: dict[str, Any] | None = None
        self.stop_reason: str | None = None  # "total", "inactivity" or "cancelled"
        self.nonce = secrets.token_hex(16)  # a result counts only if it carries this
        self.done = asyncio.Event()

    def emit(self, event: ScratchpadEvent) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(event)
        except Exception:
            log.exception("scratchpad event handler failed")

    def output(self, stream: Stream, text: str) -> None:
        self.last_activity = time.monotonic()
        buffer = self.stderr if stream == "stderr" else self.stdout
        kept = buffer.add(text)
        if kept:
            self.emit(CellOutput(self.pad, self.cell.index, stream, kept))
        if buffer.truncated and not buffer.announced:
            buffer.announced = True
            notice = f"\n... (more output follows; only the first {self.keep} characters are kept)\n"
            self.emit(CellOutput(self.pad, self.cell.index, stream, notice))

    def progress(self, message: str) -> None:
        self.last_activity = time.monotonic()
        self.inactivity = max(self.inactivity, self.after_progress)
        self.emit(CellProgress(self.pad, self.cell.index, message))


class Scratchpad:
    """One named pad: a child process (started on the first cell), its cells, and optionally its own venv."""

    def __init__(
        self,
        name: str,
        *,
        workspace: Path,
        venv_dir: Path,
        limits: ScratchpadLimits,
        llm_bridge: LLMBridge | None = None,
    ) -> None:
        self.name = validate_pad_name(name)
        self.workspace = Path(workspace)
        self.venv_dir = Path(venv_dir)
        self.limits = limits
        self.cells: list[Cell] = []
        self._llm_bridge = llm_bridge
        self._next_index = 1
        self._process: PadProcess | None = None
        self._run: _CellRun | None = None
        self._lock = asyncio.Lock()
        self._pending_notice: str | None = None
        self._sink: ScratchpadEventSink | None = None  # where the latest cell's events went (late output goes too)
        self._llm_tasks: dict[asyncio.Task[None], PadProcess] = {}
        self._removed = False
        self._abandoned: set[PadProcess] = set()

    # --- state ------------------------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def is_running(self) -> bool:
        return self._process is not None and not self._process.closed.is_set()

    @property
    def is_busy(self) -> bool:
        return self._run is not None

    @property
    def interpreter(self) -> Path:
        """The Python the next process runs on: the pad's own venv once it has one, else the app's."""
        return existing_venv_python(self.venv_dir) or Path(sys.executable)

    # --- actions ----------------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the process now instead of on the first cell."""
        async with self._lock:
            await self._ensure_process()

    async def execute(
        self,
        code: str,
        *,
        description: str = "",
        estimated_seconds: float | None = None,
        on_event: ScratchpadEventSink | None = None,
    ) -> Cell:
        """Run one cell and return its record. Empty code raises EmptyCodeError; everything that goes wrong
        while the cell runs (its exception, a limit, a crash, a cancel) is reported in the returned Cell."""
        if not code.strip():
            raise EmptyCodeError(
                "No code provided: the cell is empty, so nothing ran. If a long cell was sent, it may have been "
                "cut off on the way; split it into smaller cells."
            )
        async with self._lock:
            if self._removed:
                raise ScratchpadError(f"Scratchpad '{self.name}' was removed.")
            cell = Cell(
                code=code,
                description=description,
                estimated_seconds=estimated_seconds,
                index=self._next_index,
                status="running",
            )
            self._next_index += 1
            self.cells.append(cell)
            run = _CellRun(self.name, cell, self.limits.budget(estimated_seconds), self.limits, on_event)
            self._run = run
            self._sink = on_event
            run.emit(CellStarted(self.name, cell.index, description, code))
            try:
                await self._run_cell(run)
            except asyncio.CancelledError:
                run.stop_reason = run.stop_reason or "cancelled"
                self._abandon_process()
                self._finish(run)
                raise
            except Exception:
                self._abandon_process()
                self._finish(run)
                raise
            finally:
                self._run = None
                compact_old_cells(self.cells, max(self.limits.keep_recent, 1))
                if cell.finished_at is not None:
                    run.emit(CellFinished(self.name, cell.index, cell))
            return cell

    def cancel(self) -> bool:
        """Stop the running cell (the process goes with it). Returns False when no cell is running."""
        run = self._run
        if run is None or run.done.is_set():
            return False
        run.stop_reason = "cancelled"
        if self._process is not None:
            self._process.kill()
        return True

    async def reset(self) -> str:
        """End the process and forget the cells; the next cell starts from an empty namespace."""
        self.cancel()
        async with self._lock:
            await self._stop_process()
            self.cells.clear()
            self._pending_notice = None
        return f"Scratchpad '{self.name}' was reset: its variables are gone."

    async def install(self, packages: list[str]) -> str:
        """Install requirements into this pad's own environment (made on first use), then restart the pad on it."""
        requirements = validate_requirements(packages)
        async with self._lock:
            try:
                python = await asyncio.to_thread(ensure_venv, self.venv_dir)
            except OSError as exc:
                raise InstallError(f"could not create the environment for scratchpad '{self.name}': {exc}") from exc
            output = await pip_install(python, requirements, cwd=self.workspace, timeout=self.limits.install_timeout)
            was_running = self.is_running
            await self._stop_process()
        listed = ", ".join(requirements)
        if "Successfully installed" in output:
            message = f"Installed {listed} into scratchpad '{self.name}' (its own environment, {self.venv_dir})."
        else:
            message = f"{listed}: already available to scratchpad '{self.name}'; nothing new was installed."
        if was_running:
            message += (
                " The scratchpad process restarted on its own environment, so variables from earlier "
                "cells are gone: re-run what you need."
            )
        else:
            message += " Its cells now run on its own environment."
        return message

    def view(self) -> str:
        return view_cells(self.name, self.cells)

    def dump(self) -> str:
        return dump_cells(self.name, self.cells)

    async def close(self) -> None:
        """End the process for good (used by remove and close_all)."""
        self._removed = True
        self.cancel()
        async with self._lock:
            await self._stop_process()
            for task in list(self._llm_tasks):
                task.cancel()
            for process in list(self._abandoned):
                await process.terminate()
            self._abandoned.clear()

    # --- running a cell ---------------------------------------------------------------------------------------
    async def _run_cell(self, run: _CellRun) -> None:
        cell = run.cell
        cell.notice, self._pending_notice = self._pending_notice, None
        try:
            await self._ensure_process()
        except ScratchpadStartError as exc:
            cell.started_at = cell.finished_at = time.time()
            cell.status = "error"
            cell.error = f"Could not start the scratchpad process: {exc}"
            return
        process = run.process = self._process
        assert process is not None
        if run.stop_reason == "cancelled":
            self._abandon_process()
        cell.started_at = time.time()
        run.started = run.last_activity = time.monotonic()
        try:
            await process.send({"op": protocol.EXEC, "cell": cell.index, "code": cell.code, "nonce": run.nonce})
        except (ConnectionError, OSError):
            pass  # the process is gone; its close handler ends the run
        await self._supervise(run, process)
        self._finish(run, process)

    async def _supervise(self, run: _CellRun, process: PadProcess) -> None:
        interval = self.limits.heartbeat_interval
        next_beat = run.started + interval if interval and interval > 0 else math.inf
        while not run.done.is_set():
            now = time.monotonic()
            total_deadline = run.started + run.budget.total
            quiet_deadline = math.inf if run.llm_pending else run.last_activity + run.inactivity
            if now >= total_deadline or now >= quiet_deadline:
                run.stop_reason = "total" if now >= total_deadline else "inactivity"
                process.kill()
                await self._wait_closed(process)
                return
            if now >= next_beat:
                run.emit(CellHeartbeat(self.name, run.cell.index, now - run.started))
                next_beat += interval
                if next_beat <= now:
                    next_beat = now + interval
                continue
            try:
                async with asyncio.timeout(min(total_deadline, quiet_deadline, next_beat) - now):
                    await run.done.wait()
            except TimeoutError:
                pass
        if run.stop_reason is not None:
            await self._wait_closed(process)

    async def _wait_closed(self, process: PadProcess) -> None:
        """Wait for a killed process to be collected; give up after a while (something it forked may still
        hold its pipes) and let the reader finish in the background."""
        try:
            await asyncio.wait_for(process.closed.wait(), KILL_WAIT_SECONDS)
        except TimeoutError:
            log.warning("scratchpad %r: process %s was killed but is not collected yet", self.name, process.pid)
            if self._process is process:
                self._process = None

    def _finish(self, run: _CellRun, process: PadProcess | None = None) -> None:
        cell = run.cell
        cell.finished_at = time.time()
        if cell.started_at is None:
            cell.started_at = cell.finished_at
        cell.stdout = run.stdout.value()
        cell.stdout_total_chars = run.stdout.total
        cell.stderr = run.stderr.value()
        if run.stderr.truncated:
            cell.stderr += f"\n... (stderr cut: {run.stderr.total} chars in total)"
        cell.truncated = run.stdout.truncated or run.stderr.truncated
        if run.result is not None and run.stop_reason is None:
            cell.error = run.result.get("error") or None
            cell.logs = str(run.result.get("logs") or "")
            cell.status = "error" if cell.error else "ok"
            notice = str(run.result.get("notice") or "")
            if notice:
                cell.notice = f"{cell.notice}\n{notice}" if cell.notice else notice
            return
        lost = "The scratchpad process was stopped, so its variables are gone; the next cell starts a fresh one."
        if run.stop_reason == "cancelled":
            cell.status = "cancelled"
            cell.error = "Cancelled by user."
            why = "was cancelled"
        elif run.stop_reason == "total":
            cell.status = "killed"
            cell.error = (
                f"Cell timed out after {_seconds(run.budget.total)}s total. {lost} Split long work into "
                f"smaller cells, or pass estimated_execution_time_seconds when a cell needs longer."
            )
            why = "timed out"
        elif run.stop_reason == "inactivity":
            cell.status = "killed"
            cell.error = (
                f"Cell killed after {_seconds(run.inactivity)}s without output (nothing printed and no "
                f"progress() call in that time). {lost} In long quiet loops call progress('...') now "
                f"and then."
            )
            why = "was killed for inactivity"
        else:
            cell.status = "killed"
            exit_text = process.exit_description() if process is not None else "unknown cause"
            cell.error = f"Cell killed: the scratchpad process exited ({exit_text}). {lost}"
            cell.error += self._crash_hint(process, cell.stderr)
            why = f"ended the process ({exit_text})"
        self._pending_notice = (
            f"The previous cell {why}, so this cell runs in a fresh scratchpad process: "
            f"variables and imports from earlier cells are gone."
        )

    def _crash_hint(self, process: PadProcess | None, stderr: str) -> str:
        limit = self.limits.memory_limit_mb
        tail = stderr[-4000:]
        if "MemoryError" in tail or "Cannot allocate memory" in tail:
            return f" It ran out of memory (limit {limit} MB)." if limit else " It ran out of memory."
        if "Fatal Python error" in tail:
            return " The interpreter crashed; see [stderr] for where."
        if process is not None and process.capped is not None:
            return " Start fewer processes at once (a pool of a few workers, not one per item)."
        if process is not None and process.returncode == -9 and not process.stopped_on_purpose:
            return " Something outside the app killed it (often the system's out-of-memory killer)."
        return ""

    # --- the process --------------------------------------------------------------------------------------------
    async def _ensure_process(self) -> None:
        if self._process is not None and not self._process.closed.is_set():
            return
        python = self.interpreter
        env = pad_environment(os.environ, pass_api_keys=self.limits.pass_api_keys)
        env["ANTON_SCRATCHPAD"] = self.name
        if self.limits.memory_limit_mb:
            # The limit counts address space; fewer malloc arenas keep reserved-but-unused space from eating it.
            env.setdefault("MALLOC_ARENA_MAX", "2")
        if python != Path(sys.executable):
            env["VIRTUAL_ENV"] = str(self.venv_dir)
            env["PATH"] = str(python.parent) + os.pathsep + env.get("PATH", "")
        config = {
            "workspace": str(self.workspace),
            "memory_limit_mb": self.limits.memory_limit_mb,
            "llm": self._llm_bridge is not None,
            "max_processes": self.limits.max_processes,
        }
        self._process = await PadProcess.spawn(
            python,
            workspace=self.workspace,
            config=config,
            env=env,
            on_message=self._on_message,
            on_closed=self._on_closed,
            start_timeout=self.limits.start_timeout,
        )

    def _abandon_process(self) -> None:
        """Kill the process without waiting; its reader finishes the clean-up in the background (`close` waits)."""
        if self._process is not None:
            self._process.stopped_on_purpose = True
            self._process.kill()
            self._abandoned.add(self._process)
            self._process = None

    async def _stop_process(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            await process.terminate()

    def _on_closed(self, process: PadProcess) -> None:
        self._abandoned.discard(process)
        was_current = self._process is process
        if was_current:
            self._process = None
        for task, owner in list(self._llm_tasks.items()):
            if owner is process:
                task.cancel()
        run = self._run
        if run is not None and run.process is process and not run.done.is_set():
            run.done.set()  # the cell's end is reported by _finish
        elif was_current and not process.stopped_on_purpose and not self._removed:
            self._pending_notice = (
                f"The scratchpad process exited between cells ({process.exit_description()}), "
                f"so this cell runs in a fresh one: variables from earlier cells are gone."
            )

    def _on_message(self, process: PadProcess, message: dict[str, Any]) -> None:
        op = message["op"]
        run = self._run
        if run is None or run.process is not process or run.done.is_set():
            run = None
            if process is not self._process:
                return  # a process already given up on (its cell was cancelled)
        if op == protocol.OUT:
            stream: Stream = "stderr" if message.get("stream") == "stderr" else "stdout"
            text = str(message.get("text", ""))
            if run is not None and not message.get("late"):
                run.output(stream, text)
            else:
                self._late(message.get("cell"), stream, text)
        elif op == protocol.PROGRESS and run is not None:
            run.progress(str(message.get("message", "")))
        elif op == protocol.OUTSIDE and run is not None:
            kind: Literal["network", "file"] = "network" if message.get("kind") == "network" else "file"
            target = str(message.get("target", ""))[:300]
            run.cell.outside.append(f"{kind} {target}")
            run.emit(CellOutside(self.name, run.cell.index, kind, target))
        elif op == protocol.LLM_REQUEST:
            task = asyncio.get_running_loop().create_task(self._answer_llm(process, message, run))
            self._llm_tasks[task] = process
            task.add_done_callback(lambda done: self._llm_tasks.pop(done, None))
        elif op == protocol.RESULT and run is not None:
            if message.get("cell") != run.cell.index or message.get("nonce") != run.nonce:
                log.warning(
                    "scratchpad %r: ignored a result not sent by the pad for cell %s", self.name, run.cell.index
                )
                return
            run.result = message
            run.done.set()

    def _late(self, index: Any, stream: Stream, text: str) -> None:
        """Output written after cell `index` ended (the last cell when none is named): kept on that cell and shown
        under it, never given to the model."""
        cell = next((c for c in reversed(self.cells) if c.index == index), None) if isinstance(index, int) else None
        if cell is None:
            cell = next((c for c in reversed(self.cells) if c.finished_at is not None), None)
        if cell is None:
            return
        room = LATE_OUTPUT_MAX_CHARS - len(cell.after_end)
        if room <= 0:
            return
        shown = (LATE_HEADING if not cell.after_end else "") + text[:room]
        cell.after_end += text[:room]
        sink = self._sink
        if sink is not None:
            try:
                sink(CellOutput(self.name, cell.index, stream, shown))
            except Exception:
                log.exception("scratchpad event handler failed")

    async def _answer_llm(self, process: PadProcess, message: dict[str, Any], run: _CellRun | None) -> None:
        request = message.get("request")
        if run is not None:
            run.llm_pending += 1
        try:
            if self._llm_bridge is None:
                reply: dict[str, Any] = {"error": "no language model is connected to this scratchpad"}
            else:
                answer = await self._llm_bridge(dict(request) if isinstance(request, dict) else {})
                if not isinstance(answer, dict):
                    answer = {"text": str(answer)}
                reply = {"reply": json.loads(json.dumps(answer, default=str))}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the model call failed: the cell gets a RuntimeError saying why
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            if run is not None:
                run.llm_pending -= 1
                run.last_activity = time.monotonic()
        if not process.closed.is_set():
            with contextlib.suppress(ConnectionError, OSError):
                await process.send({"op": protocol.LLM_REPLY, "id": message.get("id"), **reply})


class ScratchpadManager:
    """All pads of a session, by name. Pads start lazily; `close_all` ends every process."""

    def __init__(
        self,
        workspace: Path,
        venv_root: Path,
        limits: ScratchpadLimits | None = None,
        llm_bridge: LLMBridge | None = None,
    ) -> None:
        self.workspace = Path(workspace)
        self.venv_root = Path(venv_root)
        self.limits = limits or ScratchpadLimits()
        self.llm_bridge = llm_bridge
        self._pads: dict[str, Scratchpad] = {}

    async def get_or_create(self, name: str) -> Scratchpad:
        pad = self._pads.get(name)
        if pad is None:
            pad = Scratchpad(
                name,
                workspace=self.workspace,
                venv_dir=self.venv_root / validate_pad_name(name),
                limits=self.limits,
                llm_bridge=self.llm_bridge,
            )
            self._pads[name] = pad
        return pad

    def get(self, name: str) -> Scratchpad | None:
        return self._pads.get(name)

    def names(self) -> list[str]:
        return list(self._pads)

    async def remove(self, name: str) -> bool:
        """End the pad's process and forget it. Its environment folder stays, so a later pad of that name
        reuses what was installed."""
        pad = self._pads.pop(name, None)
        if pad is None:
            return False
        await pad.close()
        return True

    async def close_all(self) -> None:
        pads, self._pads = list(self._pads.values()), {}
        await asyncio.gather(*(pad.close() for pad in pads), return_exceptions=True)
