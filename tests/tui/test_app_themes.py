"""Theme files: the shipped ones, user themes in ANTON_HOME/themes, broken files reported and left alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from anton_tui.agent.events import ScratchpadActivity, TurnFinished
from anton_tui.scratchpad.events import CellStarted
from anton_tui.tui.app import AntonApp
from anton_tui.tui.themes import ThemeFileError, bundled_themes_dir, load_theme_file, load_theme_folder

from .app_support import ScriptedSession, make_settings, notifications, scripted_app, wait_until
from .screen_reader import screen_runs

SIZE = (100, 30)
GOOD_THEME = """\
name = "sunrise"
dark = false
primary = "#C2410C"
background = "#FFF7ED"
foreground = "#1C1917"

[variables]
"footer-key-foreground" = "#C2410C"
"""


def user_themes() -> Path:
    folder = Path(os.environ["ANTON_HOME"]) / "themes"
    folder.mkdir(exist_ok=True)
    return folder


def test_shipped_themes_all_pass_the_checks_user_themes_get() -> None:
    loaded = load_theme_folder(bundled_themes_dir())
    assert loaded.problems == []
    names = {theme.name for theme in loaded.themes}
    assert {"anton-dark", "anton-light", "anton-high-contrast"} <= names
    light = next(theme for theme in loaded.themes if theme.name == "anton-light")
    assert light.dark is False
    assert light.variables["footer-key-foreground"] == light.primary
    trusted = load_theme_folder(bundled_themes_dir(), trusted=True)  # as the app loads them, without pydantic
    assert trusted.themes == loaded.themes


def test_a_trusted_theme_file_that_does_not_load_is_still_explained(tmp_path: Path) -> None:
    path = tmp_path / "shipped.toml"
    path.write_text('name = "x"\nprimary = "#fff"\nshadow = "#000"\n', encoding="utf-8")
    with pytest.raises(ThemeFileError, match="shadow: Extra inputs are not permitted"):
        load_theme_file(path, trusted=True)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('name = "x"\nprimary = "not-a-colour"\n', "primary: 'not-a-colour' is not a colour"),
        ('name = "x"\n', "primary: Field required"),
        ('name = "x"\nprimary = "#fff"\nshadow = "#000"\n', "shadow: Extra inputs are not permitted"),
        ('name = "x"\nprimary = "#fff"\n[variables]\n"a;b" = "red"\n', "variables: 'a;b' is not a variable name"),
        ('name = "x"\nprimary = "#fff\n', "is not valid TOML"),
        ('name = "has space"\nprimary = "#fff"\n', "name: use letters, digits"),
    ],
)
def test_invalid_theme_files_are_explained(tmp_path: Path, body: str, reason: str) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ThemeFileError) as caught:
        load_theme_file(path)
    assert str(caught.value).startswith("mine.toml: ")
    assert reason in str(caught.value)


async def test_app_registers_shipped_themes_next_to_textuals_and_uses_the_configured_one() -> None:
    app = scripted_app(make_settings(theme="anton-high-contrast"), ScriptedSession([]))
    async with app.run_test(size=SIZE):
        assert {"anton-dark", "anton-light", "anton-high-contrast", "nord", "textual-dark"} <= set(app.available_themes)
        assert app.theme == "anton-high-contrast"
        assert app.get_css_variables()["background"].upper() == "#000000"


async def test_broken_user_theme_is_reported_and_skipped_and_a_good_one_is_registered() -> None:
    folder = user_themes()
    (folder / "sunrise.toml").write_text(GOOD_THEME, encoding="utf-8")
    broken = folder / "broken.toml"
    broken.write_text('name = "broken"\nprimary = "#12345G"\n', encoding="utf-8")
    before = broken.read_bytes()
    app = scripted_app(make_settings(theme="sunrise"), ScriptedSession([]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "sunrise"
        assert "broken" not in app.available_themes
        messages = notifications(app)
        assert any(m.startswith("broken.toml: primary: '#12345G' is not a colour") for m in messages)
    assert broken.read_bytes() == before, "a broken theme file is never rewritten"


async def test_unknown_configured_theme_falls_back_with_a_warning() -> None:
    app = scripted_app(make_settings(theme="no-such-theme"), ScriptedSession([]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "anton-dark"
        assert any("'no-such-theme' is not installed" in m for m in notifications(app))


async def test_reload_user_themes_picks_up_new_changed_and_removed_files() -> None:
    folder = user_themes()
    app = scripted_app(make_settings(), ScriptedSession([]))
    async with app.run_test(size=SIZE) as pilot:
        assert "sunrise" not in app.available_themes
        path = folder / "sunrise.toml"
        path.write_text(GOOD_THEME, encoding="utf-8")
        assert app.reload_user_themes() == []
        assert "sunrise" in app.available_themes
        app.theme = "sunrise"
        await pilot.pause()
        orange = app.screen.query_one("#brand").styles.color
        assert app.current_theme.primary == "#C2410C"

        path.write_text(GOOD_THEME.replace("#C2410C", "#15803D"), encoding="utf-8")
        app.reload_user_themes()
        await pilot.pause()
        assert app.current_theme.primary == "#15803D"
        green = app.screen.query_one("#brand").styles.color
        assert green != orange and green.g > green.r, "the theme in use is re-applied to the screen"

        path.unlink()
        app.reload_user_themes()
        await pilot.pause()
        assert "sunrise" not in app.available_themes
        assert app.theme == "anton-dark"


async def test_a_user_theme_can_replace_a_shipped_one_until_it_is_removed() -> None:
    path = user_themes() / "dark-override.toml"
    path.write_text('name = "anton-dark"\nprimary = "#FF00FF"\n', encoding="utf-8")
    app = scripted_app(make_settings(), ScriptedSession([]))
    async with app.run_test(size=SIZE):
        assert app.current_theme.primary == "#FF00FF"
        path.unlink()
        app.reload_user_themes()
        assert app.current_theme.primary != "#FF00FF"
        assert app.get_theme("anton-dark") is not None


def _colour_of(app: AntonApp, word: str) -> str | None:
    for run in screen_runs(app):
        if run.text.strip() == word:
            return run.colour
    raise AssertionError(f"{word!r} is not on screen")


async def test_code_highlighting_follows_the_theme() -> None:
    code = "import json\nvalue = json.loads('[1]')"
    started = ScratchpadActivity(CellStarted("main", 1, "parse", code))
    session = ScriptedSession([started, TurnFinished(1, "end_turn", "")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x", "enter")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: bool(app.screen.query("CellView")))
        await pilot.pause()
        dark_keyword = _colour_of(app, "import")
        app.theme = "anton-light"
        await pilot.pause()
        light_keyword = _colour_of(app, "import")
        assert dark_keyword != light_keyword
