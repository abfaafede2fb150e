"""Support for the app tests: a scripted chat session, settings, and helpers to read what the screen shows.

`ScriptedSession` plays a list of engine events per turn with small awaits in between. A script step is an event, a
`Pause` (wait on an asyncio.Event the test releases), or a `Raise` (fail the turn).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Sequence

from textual.app import App
from textual.pilot import Pilot

from anton_tui.agent.events import MemoryConfirmationNeeded, SessionEvent
from anton_tui.tui.app import AntonApp

from ..runtime_sessions import QuietSession
from .screen_reader import screen_text


@dataclass
class Pause:
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    reached: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Raise:
    error: BaseException


@dataclass
class AppSettings:
    home: Path
    project_dir: Path
    theme: str = "anton-dark"
    memory_mode: str = "autopilot"
    planning_provider: str = "anthropic"
    planning_model: str = "claude-test"
    keymap: dict[str, str] = field(default_factory=dict)
    episodic_memory: bool = True
    context_window: int | None = None
    memory_sync_minutes: int = 0
    compaction_every_turns: int = 10
    managed_memory: str | None = None
    notify_bell: bool = True
    notify_desktop: bool = True
    env_warnings: list[str] = field(default_factory=list)

    @property
    def effective_memory_mode(self) -> str:
        return self.memory_mode


class ScriptedSession(QuietSession):
    """Plays `scripts[n]` for the n-th turn (the last script repeats); records prompts (with the notes a turn carries
    after its text), cancels, pad actions and the answers to memory confirmations (it waits for them, as the engine
    does)."""

    def __init__(self, *scripts: list[Any], step_delay: float = 0.001) -> None:
        super().__init__()
        self.scripts = list(scripts) or [[]]
        self.step_delay = step_delay
        self.prompts: list[str] = []
        self.cancel_calls = 0
        self.pad_actions: list[tuple[str, str]] = []
        self.closed_turns = 0
        self.confirmed: list[list[Any]] = []

    async def turn(self, user_text: str, notes: Sequence[str] = ()) -> AsyncIterator[SessionEvent]:
        script = self.scripts[min(len(self.prompts), len(self.scripts) - 1)]
        self.prompts.append("\n\n".join([user_text, *notes]))
        try:
            for step in script:
                if self.step_delay:
                    await asyncio.sleep(self.step_delay)
                if isinstance(step, Pause):
                    step.reached.set()
                    await step.gate.wait()
                elif isinstance(step, Raise):
                    raise step.error
                else:
                    yield step
                    if isinstance(step, MemoryConfirmationNeeded):  # like the engine, wait for the answer
                        self.confirmed.append(await step.future)
        finally:
            self.closed_turns += 1

    def cancel(self) -> None:
        self.cancel_calls += 1

    async def cancel_cell(self, pad: str) -> None:
        self.pad_actions.append(("cancel_cell", pad))

    async def reset_pad(self, pad: str) -> None:
        self.pad_actions.append(("reset_pad", pad))

    async def remove_pad(self, pad: str) -> None:
        self.pad_actions.append(("remove_pad", pad))


class KeepsNotifications:
    """Mixed into a test's app class (before its Textual `App`): the message of every notification the app shows is
    kept in `notified`, in order, as it passes through the public `App.notify` (every toast does). Tests read them
    with `notifications(app)`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notified: list[str] = []

    def notify(self, message: str, **options: Any) -> None:
        self.notified.append(str(message))
        super().notify(message, **options)  # type: ignore[misc]


class KeptNotificationsApp(KeepsNotifications, AntonApp):
    """The app the tests run, keeping its notifications."""


def scripted_app(
    settings: Any,
    session: Any,
    *,
    stores: Any = None,
    scratchpad_control: Any = None,
    closing: Any = None,
    banner: str | None = None,
    suggest_prompt: Callable[[], str | None] | None = None,
    app_class: Any = None,
    controls_pads: bool = True,
    **options: Any,
) -> Any:
    """The app over a `Runtime` of `settings` and a (scripted) `session`; no inspector unless `inspector=True`. The
    session acts on the scratchpads too unless `scratchpad_control` is given or `controls_pads` is False."""
    from anton_tui.runtime import Runtime

    control = scratchpad_control if scratchpad_control is not None else session if controls_pads else None
    runtime = Runtime(settings, session, stores=stores, control=control, closing=closing, banner=banner,
                      suggest_prompt=suggest_prompt)  # fmt: skip
    return (app_class or KeptNotificationsApp)(runtime, **({"inspector": False} | options))


def make_settings(**overrides: Any) -> AppSettings:
    """Settings for the temporary ANTON_HOME and project folder the shared fixture set up."""
    values: dict[str, Any] = {"home": Path(os.environ["ANTON_HOME"]), "project_dir": Path(os.environ["ANTON_PROJECT_DIR"])}
    values.update(overrides)
    return AppSettings(**values)



async def wait_until(pilot: Pilot, condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Let the app run until `condition()` holds; fails the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s:\n{screen_text(pilot.app)}")
        await pilot.pause(0.02)


def notifications(app: App) -> list[str]:
    """The messages of every notification the app has shown, in order (`KeepsNotifications`)."""
    assert isinstance(app, KeepsNotifications), f"{type(app).__name__} does not keep its notifications"
    return list(app.notified)


async def send(pilot: Pilot, text: str) -> None:
    """Put `text` in the prompt and press Enter."""
    from anton_tui.tui.widgets.prompt import Prompt

    pilot.app.screen.query_one(Prompt).load_text(text)
    await pilot.press("enter")
