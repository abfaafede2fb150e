"""The setup screen writes the project's .anton/.env with Anton's variable names, and refuses bad input."""

from __future__ import annotations

import stat
from functools import partial
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, Select, Static, Switch

from anton_tui.config import Settings, load_settings
from anton_tui.runtime.runtime import save_settings
from anton_tui.tui.screens.setup import SetupOutcome, SetupScreen

from .app_support import KeepsNotifications, notifications

SIZE = (120, 40)
EXISTING = "# Anton environment variables\n# my own note\nANTON_THEME=nord\nCUSTOM_TOOL_TOKEN=abc123\n"


class SetupHost(KeepsNotifications, App[None]):
    def __init__(self, settings: Settings, *, first_run: bool = False) -> None:
        super().__init__()
        self.settings = settings
        self.first_run = first_run
        self.results: list[object] = []

    def on_mount(self) -> None:
        save = partial(save_settings, self.settings.project_dir)  # what the runtime's save_settings does
        self.push_screen(
            SetupScreen(self.settings, save, cursor_blink=False, first_run=self.first_run), self.results.append
        )


async def settle(pilot) -> None:
    """Let the save (a worker writing the file off the event loop) finish and the screen close."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def env_file(project_dir: Path) -> Path:
    return project_dir / ".anton" / ".env"


def write_env(project_dir: Path, text: str) -> Path:
    path = env_file(project_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def error_text(app: App) -> str:
    return str(app.screen.query_one("#setup-error", Static).render())


async def test_save_writes_antons_variables_privately_and_keeps_other_lines(project_dir: Path) -> None:
    path = write_env(project_dir, EXISTING)
    path.chmod(0o644)
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert app.focused is screen.query_one("#api-key")  # no key yet: the key field comes first
        await pilot.press(*"sk-ant-test-123")
        screen.query_one("#memory-mode", Select).value = "copilot"
        screen.query_one("#acc-mode", Select).value = "active"
        await pilot.click("#episodic")
        await pilot.press("ctrl+s")
        await settle(pilot)

    text = path.read_text()
    assert text.startswith(EXISTING)
    lines = set(text.splitlines())
    assert {
        "ANTON_PLANNING_PROVIDER=anthropic",
        "ANTON_PLANNING_MODEL=claude-sonnet-4-6",
        "ANTON_CODING_PROVIDER=anthropic",
        "ANTON_CODING_MODEL=claude-haiku-4-5-20251001",
        "ANTON_ANTHROPIC_API_KEY=sk-ant-test-123",
        "ANTON_MEMORY_MODE=copilot",
        "ANTON_EPISODIC_MEMORY=false",
        "ANTON_ACC_MODE=active",
    } <= lines
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    [result] = app.results
    assert isinstance(result, Settings)
    assert (result.memory_mode, result.episodic_memory, result.acc_mode) == ("copilot", False, "active")
    assert result.anthropic_api_key.get_secret_value() == "sk-ant-test-123"
    assert not result.needs_setup()


async def test_leaving_the_key_empty_keeps_the_saved_one(project_dir: Path) -> None:
    path = write_env(project_dir, "ANTON_ANTHROPIC_API_KEY=sk-ant-old-key\n")
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        key = app.screen.query_one("#api-key", Input)
        assert key.value == "" and "leave empty to keep" in key.placeholder
        assert key.password
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert "ANTON_ANTHROPIC_API_KEY=sk-ant-old-key\n" in path.read_text()
    assert path.read_text().count("ANTON_ANTHROPIC_API_KEY") == 1
    assert app.results[0].anthropic_api_key.get_secret_value() == "sk-ant-old-key"


async def test_openai_compatible_needs_a_valid_base_url(project_dir: Path) -> None:
    path = write_env(project_dir, EXISTING)
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert not screen.query_one("#row-base-url").display
        screen.query_one("#provider", Select).value = "openai-compatible"
        await settle(pilot)
        assert screen.query_one("#row-base-url").display
        screen.query_one("#planning-model", Input).value = "qwen2.5-coder"
        screen.query_one("#coding-model", Input).value = "qwen2.5-coder"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "needs its base URL" in error_text(app)
        assert app.focused is screen.query_one("#base-url")
        screen.query_one("#base-url", Input).value = "localhost:11434"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "must start with http" in error_text(app)
        assert path.read_text() == EXISTING and not app.results
        screen.query_one("#base-url", Input).value = "http://localhost:11434/v1"
        await pilot.press("ctrl+s")
        await settle(pilot)

    lines = set(path.read_text().splitlines())
    assert {
        "ANTON_PLANNING_PROVIDER=openai-compatible",
        "ANTON_CODING_PROVIDER=openai-compatible",
        "ANTON_PLANNING_MODEL=qwen2.5-coder",
        "ANTON_OPENAI_BASE_URL=http://localhost:11434/v1",
    } <= lines
    assert not any(line.startswith("ANTON_OPENAI_API_KEY") for line in lines)
    assert app.results[0].openai_base_url == "http://localhost:11434/v1"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("planning-model", "claude\nsonnet", "on one line"),
        ("coding-model", "", "enter a model name"),
        ("api-key", "sk ant", "has a space"),
        ("api-key", "", "API key"),
    ],
)
async def test_invalid_input_is_refused_and_nothing_is_written(
    project_dir: Path, field: str, value: str, message: str
) -> None:
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        if field != "api-key":
            screen.query_one("#api-key", Input).value = "sk-ant-good"
        screen.query_one(f"#{field}", Input).value = value
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert message in error_text(app)
        assert app.screen is screen and not app.results
        messages = notifications(app)
        assert any(message in m for m in messages)
    assert not env_file(project_dir).exists()


async def test_try_the_demo_and_cancel_write_nothing(project_dir: Path) -> None:
    app = SetupHost(load_settings(), first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#setup-demo")
        await settle(pilot)
    assert app.results == [SetupOutcome.DEMO]

    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one("#api-key", Input).value = "sk-ant-unsaved"
        await pilot.press("escape")
        await settle(pilot)
    assert app.results == [None]
    assert not env_file(project_dir).exists()


async def test_an_environment_override_is_reported(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTON_MEMORY_MODE", "off")
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one("#api-key", Input).value = "sk-ant-good"
        app.screen.query_one("#memory-mode", Select).value = "copilot"
        await pilot.press("ctrl+s")
        await settle(pilot)
        messages = notifications(app)
    assert "ANTON_MEMORY_MODE=copilot" in env_file(project_dir).read_text()
    assert any("environment overrides ANTON_MEMORY_MODE" in m for m in messages)
    assert app.results[0].memory_mode == "off"


def test_needs_setup_follows_the_configured_keys(project_dir: Path) -> None:
    assert load_settings().needs_setup()
    write_env(project_dir, "ANTON_ANTHROPIC_API_KEY=sk-ant-x\n")
    assert not load_settings().needs_setup()
    write_env(project_dir, "ANTON_PLANNING_PROVIDER=openai-compatible\nANTON_OPENAI_BASE_URL=http://h:1/v1\n")
    assert load_settings().needs_setup()  # the coding model still wants an Anthropic key
    write_env(
        project_dir,
        "ANTON_PLANNING_PROVIDER=openai-compatible\nANTON_CODING_PROVIDER=openai-compatible\n"
        "ANTON_OPENAI_BASE_URL=http://h:1/v1\n",
    )
    assert not load_settings().needs_setup()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["wide", "small"])
def test_setup_screen_snapshot(snap_compare, project_dir: Path, size: tuple[int, int]) -> None:
    assert snap_compare(SetupHost(load_settings(), first_run=True), terminal_size=size)


async def test_a_project_env_that_is_not_utf8_is_not_saved_into(project_dir: Path) -> None:
    path = env_file(project_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = b"ANTON_THEME=nord\nNOTE=caf\xe9\n"
    path.write_bytes(original)
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"sk-ant-test-123")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "not UTF-8" in error_text(app)
        assert app.results == []
    assert path.read_bytes() == original


def source_text(app: App, row: str) -> str:
    return str(app.screen.query_one(f"#row-{row} .setup-source", Static).render())


async def test_each_value_says_where_it_comes_from_and_which_one_is_in_effect(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_env(project_dir, "ANTON_MEMORY_MODE=copilot\nANTON_ANTHROPIC_API_KEY=sk-ant-saved-in-file\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-shell")
    monkeypatch.setenv("ANTON_ACC_MODE", "passive")
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        key = app.screen.query_one("#api-key", Input)
        assert "ANTHROPIC_API_KEY" in key.placeholder and "environment" in key.placeholder
        assert "a key is saved" not in key.placeholder
        assert "in effect: ANTHROPIC_API_KEY from the environment" in source_text(app, "api-key")
        assert "in effect: .anton/.env of this project" in source_text(app, "memory-mode")
        assert "in effect: ANTON_ACC_MODE from the environment" in source_text(app, "acc-mode")
        assert "a value saved here is not used while it is set" in source_text(app, "acc-mode")
        assert "default" in source_text(app, "planning-model")
        key.value = "sk-ant-typed-here"
        await pilot.press("ctrl+s")
        await settle(pilot)
        messages = notifications(app)
    assert "ANTON_ANTHROPIC_API_KEY=sk-ant-typed-here" in env_file(project_dir).read_text()
    warning = next(m for m in messages if "environment" in m)
    assert "ANTHROPIC_API_KEY" in warning and "ANTON_ACC_MODE" in warning
    assert app.results[0].anthropic_api_key.get_secret_value() == "sk-ant-from-the-shell"


async def test_a_key_only_in_the_environment_is_not_called_saved(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTON_ANTHROPIC_API_KEY", "sk-ant-from-the-shell")
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        placeholder = app.screen.query_one("#api-key", Input).placeholder
        assert "a key is saved" not in placeholder and "ANTON_ANTHROPIC_API_KEY" in placeholder
        await pilot.press("ctrl+s")  # an empty key keeps using the environment's
        await settle(pilot)
    assert "API_KEY" not in env_file(project_dir).read_text()


async def test_tab_at_80x24_never_focuses_the_scrolling_form_and_keeps_the_focused_field_in_view(
    project_dir: Path,
) -> None:
    from textual.containers import VerticalScroll

    app = SetupHost(load_settings(), first_run=True)
    async with app.run_test(size=(80, 24)) as pilot:
        form = app.screen.query_one("#setup-form")
        for _ in range(14):
            await pilot.press("tab")
            await pilot.pause()
            assert not isinstance(app.focused, VerticalScroll)
            focused = app.focused
            if focused is not None and form in focused.ancestors:
                assert form.scrollable_content_region.contains_region(focused.region), focused


@pytest.mark.parametrize(
    ("provider", "key", "said"),
    [
        ("anthropic", "hello", "Anthropic keys start with sk-ant-"),
        ("anthropic", "sk-proj-abcdef123456", "looks like an OpenAI key"),
        ("openai", "sk-ant-api03-abcdef", "looks like an Anthropic key"),
        ("openai", "my-key", "OpenAI keys start with sk-"),
        ("anthropic", "sk-ant-abc$def", "'$'"),
    ],
)
def test_a_key_of_the_wrong_shape_is_refused_with_the_reason(
    project_dir: Path, provider: str, key: str, said: str
) -> None:
    from anton_tui.settings_form import SetupError, SetupValues, setup_updates

    values = SetupValues(provider, key, "", "m1", "m2", "autopilot", True, "passive")
    with pytest.raises(SetupError) as caught:
        setup_updates(values, load_settings())
    assert said in str(caught.value) and caught.value.entry == "api_key"


def test_keys_of_the_right_shape_and_any_key_of_a_compatible_server_pass(project_dir: Path) -> None:
    from anton_tui.settings_form import SetupValues, setup_updates

    for provider, key, url in [("anthropic", "sk-ant-api03-Ab_9-x", ""), ("openai", "sk-proj-Ab_9", ""),
                               ("openai-compatible", "anything-goes", "http://localhost:11434/v1")]:  # fmt: skip
        values = SetupValues(provider, key, url, "m1", "m2", "autopilot", True, "passive")
        assert key in setup_updates(values, load_settings()).values()


async def test_the_review_and_reflection_settings_are_saved_and_checked(project_dir: Path) -> None:
    path = write_env(project_dir, "ANTON_ANTHROPIC_API_KEY=sk-ant-saved\n")
    app = SetupHost(load_settings())
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        screen.query_one("#review-level", Select).value = "human"
        screen.query_one("#review-tainted", Select).value = "ai"
        screen.query_one("#review-max-per-day", Input).value = "many"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "Changes per day: expected a whole number, 0 or more ('many')" in error_text(app)
        assert app.focused is screen.query_one("#review-max-per-day")
        assert path.read_text() == "ANTON_ANTHROPIC_API_KEY=sk-ant-saved\n" and not app.results
        screen.query_one("#review-max-per-day", Input).value = "3"
        screen.query_one("#conversation-idle-minutes", Input).value = "0"
        screen.query_one("#reflection", Switch).value = False
        await pilot.press("ctrl+s")
        await settle(pilot)
    lines = set(path.read_text().splitlines())
    assert {"ANTON_REVIEW_LEVEL=human", "ANTON_REVIEW_TAINTED=ai", "ANTON_REVIEW_MAX_PER_DAY=3", "ANTON_REFLECTION=false",
            "ANTON_REFLECTION_MIN_MESSAGES=3", "ANTON_CONVERSATION_IDLE_MINUTES=0"} <= lines  # fmt: skip
    [result] = app.results
    assert (result.review_level, result.review_tainted, result.review_max_per_day) == ("human", "ai", 3)
    assert (result.reflection, result.conversation_idle_minutes) == (False, 0)
