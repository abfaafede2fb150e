"""Starting up: the first frame is painted from the raw settings' sources, the runtime is built right after in a
worker, and the app then works as usual; a bad setting opens a screen that names it and offers setup or quit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from textual.screen import Screen

from anton_tui.runtime import Runtime, RuntimeStarter
from anton_tui.settings_sources import SETTINGS_ERROR_EXIT, read_env_layers
from anton_tui.tui.app import AntonApp
from anton_tui.tui.screens.main import MainScreen
from anton_tui.tui.screens.settings_error import SettingsErrorScreen
from anton_tui.tui.screens.setup import SetupScreen
from anton_tui.tui.textual_internals import FrameHook
from anton_tui.tui.widgets.chat import UserMessage

from tests.fakellm import Reply
from tests.tui.app_support import ScriptedSession, make_settings, wait_until
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    answers,
    header_field,
    main_screen,
    project_dir,
    save_global_env,
    send_and_wait,
    started,
)


class FirstFrame(FrameHook, AntonApp):
    """Records the runtime and the header as the main screen's first frame showed them, as it is written."""

    seen: dict[str, object] = {}

    def frame_written(self, screen: Screen, renderable: object) -> None:
        if not self.seen and isinstance(screen, MainScreen):
            self.seen = dict(runtime=self.runtime, model=header_field(self, "model"), theme=self.theme)


async def test_the_first_frame_shows_the_raw_settings_then_the_runtime_takes_over(fake_llm) -> None:
    save_global_env(fake_llm, ANTON_THEME="anton-light")
    fake_llm.queue(Reply.text("Hello from the planner."), model=PLANNER)
    app = FirstFrame(RuntimeStarter(read_env_layers()), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.seen))
        assert app.seen["runtime"] is None, "the first frame is painted before the runtime is built"
        assert app.seen["model"] == PLANNER and app.seen["theme"] == "anton-light"
        await started(pilot)
        assert isinstance(app.runtime, Runtime) and main_screen(app).runtime is app.runtime
        assert header_field(app, "model") == app.seen["model"], "the header did not change once validated"
        await send_and_wait(pilot, "Say hello.")
        assert answers(app) == ["Hello from the planner."]


async def test_a_message_sent_before_the_runtime_is_ready_waits_for_it() -> None:
    settings = make_settings(home=Path(os.environ["ANTON_HOME"]), project_dir=Path(os.environ["ANTON_PROJECT_DIR"]))

    built = threading.Event()

    class SlowStarter(RuntimeStarter):
        session = ScriptedSession()

        def build(self) -> Runtime:
            built.wait(30)  # until the test has sent its message
            return Runtime(settings, self.session)

    app = AntonApp(SlowStarter(read_env_layers()), cursor_blink=False, inspector=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        screen.query_one("#prompt").load_text("Are you there?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(screen.chat.query(UserMessage)))
        assert screen.busy and app.runtime is None, "the turn waits for the runtime"
        built.set()
        await wait_until(pilot, lambda: not screen.busy)
        assert SlowStarter.session.prompts == ["Are you there?"]


async def test_a_bad_setting_opens_a_screen_naming_it_and_quit_exits_with_code_2() -> None:
    env_file = project_dir() / ".anton" / ".env"
    env_file.parent.mkdir(exist_ok=True)
    env_file.write_text("ANTON_MAX_TOKENS=0\n", encoding="utf-8")
    app = AntonApp(RuntimeStarter(read_env_layers()), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:

        def shown() -> str:
            return " ".join(str(widget.render()) for widget in app.screen.query("Static"))

        await wait_until(pilot, lambda: isinstance(app.screen, SettingsErrorScreen) and "ANTON_MAX_TOKENS" in shown())
        shown = shown()
        assert "ANTON_MAX_TOKENS" in shown and "'0'" in shown and str(env_file) in shown
        assert "a whole number greater than 0" in shown
        await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "settings-error-fix")
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_code == SETTINGS_ERROR_EXIT
    assert env_file.read_text(encoding="utf-8") == "ANTON_MAX_TOKENS=0\n", "the file is left as it was"


async def test_open_setup_from_a_bad_setting_saves_a_fix_and_starts(fake_llm) -> None:
    save_global_env(fake_llm, ANTON_PLANNING_PROVIDER="banana")
    app = AntonApp(RuntimeStarter(read_env_layers()), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsErrorScreen))
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and bool(app.screen.query("#setup-save")))
        assert not app.screen.query("#setup-demo"), "no demo offer while fixing a setting"
        await pilot.click("#setup-save")  # the provider list shows a valid provider: saving writes it
        await started(pilot)
        assert isinstance(app.runtime, Runtime) and app.runtime.settings.planning_provider == "anthropic"
        assert app.settings_error is None
    assert "ANTON_PLANNING_PROVIDER=anthropic" in (project_dir() / ".anton" / ".env").read_text(encoding="utf-8")


async def test_saving_the_setup_takes_a_bad_value_out_of_the_project_file(fake_llm) -> None:
    save_global_env(fake_llm)
    env_file = project_dir() / ".anton" / ".env"
    env_file.parent.mkdir(exist_ok=True)
    env_file.write_text("# mine\nANTON_MAX_TOKENS=0\nANTON_THEME=nord\n", encoding="utf-8")
    app = AntonApp(RuntimeStarter(read_env_layers()), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsErrorScreen))
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and bool(app.screen.query("#setup-save")))
        await pilot.click("#setup-save")
        await started(pilot)
        assert app.runtime.settings.max_tokens == 8192
    text = env_file.read_text(encoding="utf-8")
    assert "ANTON_MAX_TOKENS" not in text and text.startswith("# mine\n") and "ANTON_THEME=nord" in text


BAD_SETTING_START = textwrap.dedent(
    """
    import sys
    from anton_tui import cli
    from anton_tui.tui.app import AntonApp

    async def quit_at_the_error(pilot):
        from anton_tui.tui.screens.settings_error import SettingsErrorScreen
        while not isinstance(pilot.app.screen, SettingsErrorScreen):
            await pilot.pause(0.05)
        await pilot.press("q")

    def run_headless(app, **_):  # the command line's own path, on a headless screen
        return run_in_terminal(app, headless=True, size=(80, 24), auto_pilot=quit_at_the_error)

    run_in_terminal, AntonApp.run = AntonApp.run, run_headless
    sys.exit(cli.main([]))
    """
)


def test_quitting_at_a_bad_setting_prints_it_and_exits_with_code_2(anton_home: Path, project_dir: Path) -> None:
    (project_dir / ".anton").mkdir()
    (project_dir / ".anton" / ".env").write_text("ANTON_MAX_TOKENS=0\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", BAD_SETTING_START], capture_output=True, text=True, cwd=project_dir, timeout=60
    )
    assert result.returncode == SETTINGS_ERROR_EXIT, result.stderr
    env_file = project_dir / ".anton" / ".env"
    assert result.stderr.splitlines() == [
        f"anton-tui: ANTON_MAX_TOKENS='0' (from {env_file}) is not valid: expected a whole number greater than 0"
    ]
    assert env_file.read_text(encoding="utf-8") == "ANTON_MAX_TOKENS=0\n"


async def test_the_theme_given_on_the_command_line_wins_over_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTON_ANTHROPIC_API_KEY", "sk-test-not-used")  # no first-run setup screen
    monkeypatch.setenv("ANTON_THEME", "anton-light")
    app = AntonApp(RuntimeStarter(read_env_layers(), theme="anton-high-contrast"), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "anton-high-contrast"
        await started(pilot)
        assert app.runtime.settings.theme == "anton-high-contrast" and app.theme == "anton-high-contrast"


async def test_quitting_just_as_the_first_run_setup_screen_opens_ends_cleanly() -> None:
    app = AntonApp(RuntimeStarter(read_env_layers()), cursor_blink=False)  # no key: setup opens at start
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert type(app.screen_stack[-1]).__name__ == "SetupScreen"
    # Leaving the block quits the app while the setup screen is still opening: no error may come of it.
