"""``anton-tui ask "MESSAGE" [--continue | --resume ID] [--json]``: one turn from a script, on the app's own engine.

The runtime is built by the app's own start path (`RuntimeStarter`): the same settings, memory, skills, scratchpads,
tools, learning and saved conversations. The turn runs through `Runtime.turn`, so `@` files are checked and read as in
the app; the conversation is saved after every finished message and stays resumable, here or in the app. The answer
goes to stdout as it streams (with ``--json``: one JSON object per line for every engine event, each with a
``type``). Memories the app would ask about are held for review, never approved here: the app asks about them when
it next starts.

Exit status: 0 after a finished turn; 2 for a setting or usage problem (a bad value, no API key, no conversation to
continue), with one line on stderr and nothing run; 1 when the turn failed (the provider unreachable, say). Never a
traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import sys
from datetime import date, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from anton_tui.settings_sources import SETTINGS_ERROR_EXIT, EnvLayers, SettingsError

if TYPE_CHECKING:
    from anton_tui.agent.background import BackgroundWork
    from anton_tui.agent.session import ChatSession
    from anton_tui.runtime import Runtime

PROG = "anton-tui ask"
FAILED_EXIT = 1
BACKGROUND_WAIT = 120.0  # seconds the learning started by the turn may take before the process ends anyway


class UsageProblem(Exception):
    """Something to fix before a turn can run (a setting, a key, an id); `str()` is one line for the user."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Run one turn of a conversation and print the answer.")
    parser.add_argument("message", help="what to ask (`@path` names a file, as in the app)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--continue", dest="continue_", action="store_true", help="in the newest saved conversation")
    which.add_argument("--resume", metavar="ID", help="in the saved conversation ID")
    parser.add_argument("--json", action="store_true", help="one JSON event per line instead of the answer's text")
    return parser


# --------------------------------------------------------------------------- events as JSON


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)
                if field.name != "future"}  # fmt: skip
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(item) for item in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def event_json(event: Any) -> dict[str, Any]:
    """An engine event as one JSON object: ``type`` is the event's name in snake case (``tool_call_finished``)."""
    from anton_tui.agent.events import MemoryConfirmationNeeded, ScratchpadActivity

    if isinstance(event, MemoryConfirmationNeeded):
        return {"type": "memory_held_for_review", "engrams": _plain(event.engrams), "reasons": _plain(event.reasons)}
    if isinstance(event, ScratchpadActivity):
        inner = event.event
        return {"type": "scratchpad_" + _snake(type(inner).__name__), **_plain(inner)}
    return {"type": _snake(type(event).__name__), **_plain(event)}


# --------------------------------------------------------------------------- the turn


class Printer:
    """Writes what the user sees: the answer as it streams, or one JSON line per event; notes go to stderr."""

    def __init__(self, as_json: bool, out: IO[str], err: IO[str]) -> None:
        self.as_json = as_json
        self.out = out
        self.err = err
        self._mid_line = False

    def event(self, event: Any) -> None:
        from anton_tui.agent import events as ev

        if self.as_json:
            self.json(event_json(event))
            return
        match event:
            case ev.AssistantTextDelta(text=text):
                self.out.write(text)
                self.out.flush()
                self._mid_line = not text.endswith("\n")
            case ev.AssistantMessageDone():
                self._end_line()
            case ev.ToolCallStarted(name=name):
                self.note(f"[{name}]")
            case ev.MemoryConfirmationNeeded(engrams=engrams):
                count = len(engrams)
                self.note(f"{count} memor{'y' if count == 1 else 'ies'} held for review; the app asks about "
                          f"{'it' if count == 1 else 'them'} when it next starts.")  # fmt: skip
            case ev.SummaryAhead(at_tokens=at):
                self.note(f"Older turns will be summarised at about {at:,} tokens.")
            case ev.HistorySummarised(folded=folded):
                self.note(f"Older turns summarised ({folded} messages); their ledger is kept beside the conversation.")
            case ev.HistoryTrimmed(notice=notice) | ev.ErrorOccurred(message=notice):
                self.note(notice)
            case _:
                pass

    def json(self, data: dict[str, Any]) -> None:
        self.out.write(json.dumps(data, ensure_ascii=False) + "\n")
        self.out.flush()

    def note(self, text: str) -> None:
        self._end_line()
        self.err.write(f"{text}\n")
        self.err.flush()

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False


def _build(layers: EnvLayers) -> tuple[Runtime, ChatSession]:
    from anton_tui.agent.session import ChatSession
    from anton_tui.runtime import RuntimeStarter

    runtime = RuntimeStarter(layers).build()
    if not isinstance(runtime.session, ChatSession):  # the start path builds one whenever it is not the demo
        raise UsageProblem("this start path built no chat session")
    if runtime.needs_setup:
        settings = runtime.settings
        role = "planning" if not settings.has_api_key("planning") else "coding"
        provider = settings.planning_provider if role == "planning" else settings.coding_provider
        variable = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
        raise UsageProblem(
            f"no API key for the {role} model ({provider}): set {variable} in the environment, "
            f"{Path(layers.project_dir) / '.anton' / '.env'} or ~/.anton/.env (or run anton-tui to set it up)"
        )
    return runtime, runtime.session


async def _pick_conversation(runtime: Runtime, continue_: bool, resume: str | None) -> None:
    from anton_tui.agent.history_store import HistoryBroken

    if not continue_ and resume is None:
        return
    if not runtime.can_save_conversations:
        raise UsageProblem("saved conversations need episodic memory, and ANTON_EPISODIC_MEMORY is off")
    target = resume or await runtime.newest_conversation()
    if not target:
        raise UsageProblem("there is no saved conversation in this project to continue")
    try:
        await runtime.resume(target)
    except HistoryBroken as exc:  # a file that cannot be used: the turn cannot run (exit 1)
        raise RuntimeError(str(exc)) from None
    except (LookupError, ValueError) as exc:
        raise UsageProblem(str(exc).strip("'\"")) from None


async def _answer_between_turns(runtime: Runtime, printer: Printer) -> None:
    """Events from work that outlives the turn (learners, questions about held memories), until cancelled."""
    from anton_tui.agent.events import MemoryConfirmationNeeded

    queue = runtime.background_events
    if queue is None:
        return
    while True:
        event = await queue.get()
        if isinstance(event, MemoryConfirmationNeeded):
            event.keep_for_review()
        printer.event(event)


async def _learning_done(background: BackgroundWork, timeout: float) -> bool:
    """Wait for the work the turn started (learners, and the questions they raise, answered meanwhile by
    `_answer_between_turns`), those it starts in turn too; False when `timeout` ran out first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while background.tasks:
        left = deadline - loop.time()
        if left <= 0:
            return False
        await background.wait(left)
    return True


async def ask_once(
    layers: EnvLayers, message: str, *, continue_: bool, resume: str | None, printer: Printer
) -> tuple[int, str]:
    """Run the turn; returns (exit status, the conversation's id or "")."""
    from anton_tui.agent import events as ev

    runtime, session = await asyncio.to_thread(_build, layers)
    background: asyncio.Task[None] | None = None
    try:
        sdk = asyncio.create_task(session.warm_up_model())  # its import would hold up the turn's events
        await runtime.history.start()  # as the app: memory's history, and what waited for review last time
        background = asyncio.create_task(_answer_between_turns(runtime, printer))
        await _pick_conversation(runtime, continue_, resume)
        await sdk
        failed = ""
        async for event in runtime.turn(message):
            if isinstance(event, ev.MemoryConfirmationNeeded):
                event.keep_for_review()
            elif isinstance(event, ev.ErrorOccurred) and event.retryable:
                failed = event.message
            elif isinstance(event, ev.TurnFinished) and event.stop_reason == "error" and not failed:
                failed = "the turn ended in an error"
            printer.event(event)
        if not await _learning_done(session.background, BACKGROUND_WAIT):
            printer.note("The learning after the turn took too long; it was stopped.")
        session_id = session.session_id or ""
        return (FAILED_EXIT if failed else 0), session_id
    finally:
        if background is not None:
            background.cancel()
        await runtime.close()


def run(argv: list[str], layers: EnvLayers, *, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """``anton-tui ask``: parse, run one turn, print; returns the exit status."""
    args = build_parser().parse_args(argv)
    out, err = out or sys.stdout, err or sys.stderr
    printer = Printer(args.json, out, err)
    if not args.message.strip():
        print(f"{PROG}: the message is empty", file=err)
        return SETTINGS_ERROR_EXIT
    try:
        status, session_id = asyncio.run(
            ask_once(layers, args.message, continue_=args.continue_, resume=args.resume, printer=printer)
        )
    except (SettingsError, UsageProblem) as exc:
        if args.json:
            printer.json({"type": "error", "message": str(exc), "exit": SETTINGS_ERROR_EXIT})
        print(f"{PROG}: {exc}", file=err)
        return SETTINGS_ERROR_EXIT
    except KeyboardInterrupt:
        print(f"{PROG}: stopped", file=err)
        return 130
    except Exception as exc:  # one clear line, never a traceback
        message = str(exc) or type(exc).__name__
        if args.json:
            printer.json({"type": "error", "message": message, "exit": FAILED_EXIT})
        print(f"{PROG}: {message}", file=err)
        return FAILED_EXIT
    if args.json:
        printer.json({"type": "done", "session_id": session_id, "exit": status})
    elif session_id:
        printer.note(f"(conversation {session_id}: `anton-tui ask --resume {session_id} ...` continues it)")
    return status
