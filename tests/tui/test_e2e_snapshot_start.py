"""Starting from a settings snapshot: the first frame is painted from the snapshot the previous start left, the
settings are validated and the session is built right after, and the app then works as after any other start."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from anton_tui.config import Settings, load_settings
from anton_tui.settings_snapshot import SettingsSnapshot, recall_snapshot, remember_snapshot
from anton_tui.settings_sources import SETTINGS_ERROR_EXIT, read_env_layers
from anton_tui.tui.app import AntonApp, prepare_app
from anton_tui.tui.widgets.chat import UserMessage

from tests.fakellm import Reply
from tests.tui.app_support import ScriptedSession, make_settings, wait_until
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    answers,
    header_field,
    main_screen,
    save_global_env,
    send_and_wait,
)


class FirstFrame(AntonApp):
    """Records the settings, the header and the session as the first frame showed them."""

    seen: dict[str, object] = {}

    def on_mount(self) -> None:
        self.call_after_refresh(self.record)  # before the app's own after-the-first-frame work
        super().on_mount()

    def record(self) -> None:
        self.seen = dict(settings=self.settings, model=header_field(self, "model"), session=main_screen(self).session)


async def test_the_second_start_paints_from_the_snapshot_then_runs_on_validated_settings(fake_llm) -> None:
    save_global_env(fake_llm, ANTON_THEME="anton-light")
    first = prepare_app(read_env_layers(), app_class=FirstFrame, cursor_blink=False)
    assert isinstance(first.settings, Settings), "no snapshot yet: the settings were validated before the UI"
    async with first.run_test(size=SIZE):
        validated_model = header_field(first, "model")
    assert recall_snapshot(read_env_layers()) == SettingsSnapshot.of(first.settings)

    fake_llm.queue(Reply.text("Hello from the planner."), model=PLANNER)
    app = prepare_app(read_env_layers(), app_class=FirstFrame, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.seen))
        assert isinstance(app.seen["settings"], SettingsSnapshot) and app.seen["session"] is None
        assert app.seen["model"] == validated_model == PLANNER
        assert app.theme == "anton-light"
        await wait_until(pilot, lambda: isinstance(app.settings, Settings))
        assert main_screen(app).session is app.session is not None
        assert header_field(app, "model") == app.seen["model"], "the header did not change once validated"
        await send_and_wait(pilot, "Say hello.")
        assert answers(app) == ["Hello from the planner."]


async def test_a_message_sent_before_the_session_is_ready_waits_for_it() -> None:
    settings = make_settings(home=Path(os.environ["ANTON_HOME"]), project_dir=Path(os.environ["ANTON_PROJECT_DIR"]))
    app = AntonApp(settings, None, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        screen.query_one("#prompt").load_text("Are you there?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(screen.chat.query(UserMessage)))
        assert screen.busy, "the turn waits for the session"
        session = ScriptedSession()
        screen.attach_session(session)
        await wait_until(pilot, lambda: not screen.busy)
        assert session.prompts == ["Are you there?"]


STALE_SNAPSHOT_START = textwrap.dedent(
    """
    import sys
    from anton_tui import cli
    from anton_tui.tui.app import AntonApp

    def run_headless(app, **_):  # the command line's own path, on a headless screen
        print(type(app.settings).__name__, flush=True)
        return run_in_terminal(app, headless=True, size=(80, 24))

    run_in_terminal, AntonApp.run = AntonApp.run, run_headless
    sys.exit(cli.main([]))
    """
)


def test_a_snapshot_whose_settings_no_longer_validate_stops_with_the_usual_message(
    anton_home: Path, project_dir: Path
) -> None:
    # A snapshot is only recalled for inputs that validated before; pretend this one did (as a newer anton-tui
    # that tightened a check would find), so the bad value is met after the first frame.
    (project_dir / ".anton").mkdir()
    (project_dir / ".anton" / ".env").write_text("ANTON_MAX_TOKENS=0\n", encoding="utf-8")
    snapshot = SettingsSnapshot(anton_home, project_dir, "anton-dark", "anthropic", "claude-test", "autopilot", True)
    remember_snapshot(read_env_layers(), snapshot)
    result = subprocess.run(
        [sys.executable, "-c", STALE_SNAPSHOT_START], capture_output=True, text=True, cwd=project_dir, timeout=60
    )
    assert result.stdout.strip() == "SettingsSnapshot"
    assert result.returncode == SETTINGS_ERROR_EXIT, result.stderr
    env_file = project_dir / ".anton" / ".env"
    assert result.stderr.splitlines() == [
        f"anton-tui: ANTON_MAX_TOKENS='0' (from {env_file}) is not valid: expected a whole number greater than 0"
    ]
    assert (project_dir / ".anton" / ".env").read_text(encoding="utf-8") == "ANTON_MAX_TOKENS=0\n"
    assert recall_snapshot(read_env_layers()) is None, "the next start validates before drawing"


async def test_the_theme_given_on_the_command_line_wins_over_the_snapshot_and_the_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTON_ANTHROPIC_API_KEY", "sk-test-not-used")  # no first-run setup screen
    remember_snapshot(read_env_layers(), SettingsSnapshot.of(load_settings()))
    app = prepare_app(read_env_layers(), theme="anton-high-contrast", cursor_blink=False)
    assert isinstance(app.settings, SettingsSnapshot)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "anton-high-contrast"
        await wait_until(pilot, lambda: isinstance(app.settings, Settings))
        assert app.settings.theme == "anton-high-contrast" and app.theme == "anton-high-contrast"
    assert recall_snapshot(read_env_layers()).theme == "anton-dark", "the snapshot keeps what the settings say"


async def test_quitting_just_as_the_first_run_setup_screen_opens_ends_cleanly() -> None:
    remember_snapshot(read_env_layers(), SettingsSnapshot.of(load_settings()))  # no key: setup opens at start
    app = prepare_app(read_env_layers(), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.settings, Settings))
        assert type(app.screen_stack[-1]).__name__ == "SetupScreen"
    # Leaving the block quits the app while the setup screen is still opening: no error may come of it.
