"""End-to-end support: the full app over the real engine, pointed at the fake LLM server.

`build_app` wires the app the way `anton_tui.tui.app.build_app` does (a real `ChatSession` from
`build_session(load_settings())`, the real inspector over real `MemoryStores`), with the cursor left still so
screens do not change between frames. The fake server's address and models are written to the global
`$ANTON_HOME/.env`, as a user's saved setup would be, so that `/setup` can still override them per project.
The waits here poll for conditions instead of sleeping for fixed times.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from anton_tui.config import Settings, load_settings
from anton_tui.runtime import RuntimeStarter
from anton_tui.settings_sources import read_env_layers
from anton_tui.tui.app import AntonApp
from anton_tui.tui.screens.main import MainScreen
from anton_tui.tui.widgets.answer import AssistantMessage
from anton_tui.tui.widgets.chat import CommandReply, Notice, UserMessage
from anton_tui.tui.widgets.header import AntonHeader
from anton_tui.tui.widgets.prompt import Prompt

from .app_support import KeptNotificationsApp, notifications  # noqa: F401  (the one way tests read notifications)
from .screen_reader import screen_text

SIZE = (120, 40)
PLANNER, CODER = "planner", "coder"


def home_dir() -> Path:
    return Path(os.environ["ANTON_HOME"])


def project_dir() -> Path:
    return Path(os.environ["ANTON_PROJECT_DIR"])


def save_global_env(fake_llm: Any, **extra: str) -> Path:
    """Point Anton at the fake server through `$ANTON_HOME/.env` (plus any extra ANTON_* lines)."""
    values = {**fake_llm.env(provider="anthropic", planning_model=PLANNER, coding_model=CODER), **extra}
    path = home_dir() / ".env"
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()), encoding="utf-8")
    return path


def build_app(*, watch_files: bool = False, theme: str | None = None, demo: bool = False) -> AntonApp:
    """The full app over a real session, as `anton-tui` builds it from the settings' sources (watchers only when
    asked): the first frame, then the runtime built in a worker."""
    starter = RuntimeStarter(read_env_layers(), theme=theme, demo=demo)
    return KeptNotificationsApp(starter, watch_files=watch_files, cursor_blink=False)


async def started(pilot: Pilot, timeout: float = 10.0) -> None:
    """Wait until the app's runtime is built (and the setup screen, if any, is open)."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while isinstance(app, AntonApp) and app.runtime is None and app.settings_error is None:  # (other apps start at once)
        if time.monotonic() > deadline:
            raise AssertionError("the runtime was not built in time")
        await pilot.pause(0.02)
    await pilot.pause()


# --------------------------------------------------------------------------- reading the screen


def main_screen(app: AntonApp) -> MainScreen:
    return next(screen for screen in app.screen_stack if isinstance(screen, MainScreen))



def static_text(widget: Static) -> str:
    return str(widget.render())


def header_field(app: AntonApp, field_id: str) -> str:
    return static_text(main_screen(app).query_one(AntonHeader).query_one(f"#{field_id}", Static))


def answers(app: AntonApp) -> list[str]:
    return [block.source for block in main_screen(app).chat.query_children(AssistantMessage)]


def user_messages(app: AntonApp) -> list[str]:
    return [block.text for block in main_screen(app).chat.query_children(UserMessage)]


def notices(app: AntonApp, kind: str | None = None) -> list[str]:
    return [
        static_text(notice)
        for notice in main_screen(app).chat.query_children(Notice)
        if kind is None or notice.kind == kind
    ]


def cell_printed(app: AntonApp, pad: str, index: int, text: str) -> bool:
    """Whether cell `index` of `pad` in the scratchpad pane shows `text` in its output."""
    cell = main_screen(app).scratchpad.cell(pad, index)
    return cell is not None and text in cell.output_text


def plain(renderable: Any, width: int = 110) -> str:
    """A Rich renderable (a command's reply) as plain text."""
    console = Console(width=width, color_system=None, force_terminal=False)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get()


def command_replies(app: AntonApp) -> list[tuple[str, str]]:
    """(command line, reply text) of every slash-command reply in the chat."""
    return [(reply.line, plain(reply.output.renderable)) for reply in main_screen(app).chat.query(CommandReply)]


# --------------------------------------------------------------------------- driving and waiting


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 8.0, what: str = "") -> float:
    """Let the app run until `condition()` is true; fails with the screen's text after `timeout` seconds."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError(
                f"not within {timeout}s: {what or condition}\n--- screen ---\n{screen_text(pilot.app)}"
            )
        await pilot.pause(0.05)
    return time.monotonic() - start


async def type_in_prompt(pilot: Pilot, text: str) -> None:
    """Put `text` in the prompt and press Enter, as a user pasting a line would."""
    prompt = main_screen(pilot.app).query_one(Prompt)
    prompt.focus()
    prompt.load_text(text)
    prompt.move_cursor(prompt.document.end)
    await pilot.pause()
    await pilot.press("enter")


def prompt_text(app: AntonApp) -> str:
    return main_screen(app).query_one(Prompt).text


def turn_running(app: AntonApp) -> bool:
    return main_screen(app).busy


async def wait_turn_done(pilot: Pilot, timeout: float = 10.0, *, turns: int | None = None) -> None:
    """Wait until the UI has closed the turn; with `turns`, first until the session has started that many turns."""
    app = pilot.app
    if turns is not None:
        await wait_for(pilot, lambda: app.runtime.session.turn_count >= turns, 5.0, f"turn {turns} to start")
    await wait_for(pilot, lambda: not turn_running(app) and header_field(app, "turn-status") != "working…",
                   timeout, "the turn to end")  # fmt: skip


async def send_and_wait(pilot: Pilot, text: str, timeout: float = 10.0) -> None:
    """Send a message and wait until its turn has ended in the UI."""
    await started(pilot)
    started_turns = pilot.app.runtime.session.turn_count
    await type_in_prompt(pilot, text)
    await wait_turn_done(pilot, timeout, turns=started_turns + 1)


def accepted_requests(fake_llm: Any, model: str) -> list[Any]:
    """Requests for `model` the fake server found valid (a real API would have refused the others)."""
    return [request for request in fake_llm.requests_for(model) if request.rejected is None]


def assert_all_requests_valid(fake_llm: Any) -> None:
    refused = [f"{request.model}: {request.rejected}" for request in fake_llm.requests if request.rejected]
    assert not refused, "the fake server refused requests:\n" + "\n".join(refused)


def exec_cell(code: str, *, pad: str = "main", description: str = "") -> dict[str, Any]:
    """The input of a scratchpad tool call that runs `code`."""
    return {"action": "exec", "name": pad, "code": code, "one_line_description": description or "run a cell"}


async def wait_watching(pilot: Pilot) -> None:
    """Wait until the app's file watcher runs (it starts after the first frame, in a thread)."""
    app = pilot.app
    await wait_for(pilot, lambda: app._watcher is not None and app._watcher.running, 5.0, "the file watcher to start")
