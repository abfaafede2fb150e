"""Loads colour themes from TOML files: the ones shipped with the app and the user's own in $ANTON_HOME/themes/.

A theme file names the theme and its base colours (the fields of `textual.theme.Theme`) plus optional CSS
`variables`. A file that cannot be read or does not validate is reported with a one-line reason and skipped; it is
never rewritten.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from textual.app import App
from textual.theme import Theme

DEFAULT_THEME = "anton-dark"

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def bundled_themes_dir() -> Path:
    """The folder of theme files shipped with the app (inside the package when installed, else the source tree)."""
    installed = _PACKAGE_DIR / "themes"
    return installed if installed.is_dir() else _PACKAGE_DIR.parent / "themes"


class ThemeFileError(Exception):
    """A theme file that could not be used; `str(error)` is the one line shown to the user."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path.name}: {reason}")
        self.path = path
        self.reason = reason


def load_theme_file(path: Path, *, trusted: bool = False) -> Theme:
    """Read one theme file; raises ThemeFileError naming the file and the first problem found.

    A `trusted` file (one shipped with the app, checked by its tests) is not validated unless it fails to load,
    which keeps pydantic out of the start-up of most runs.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ThemeFileError(path, f"cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ThemeFileError(path, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ThemeFileError(path, f"is not valid TOML ({error})") from None
    if trusted:
        try:
            return Theme(**data)
        except (TypeError, ValueError):
            pass  # validated below, to say what is wrong
    from anton_tui.tui.theme_schema import validate_theme

    try:
        return Theme(**validate_theme(data))
    except ValueError as error:
        raise ThemeFileError(path, str(error)) from None


@dataclass
class ThemeFolder:
    """The themes found in one folder and the files that had to be skipped."""

    themes: list[Theme] = field(default_factory=list)
    problems: list[ThemeFileError] = field(default_factory=list)


def load_theme_folder(folder: Path, *, trusted: bool = False) -> ThemeFolder:
    """Load every `*.toml` in `folder` (a missing folder has no themes); a second file with a taken name is skipped."""
    result = ThemeFolder()
    if not folder.is_dir():
        return result
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            theme = load_theme_file(path, trusted=trusted)
        except ThemeFileError as problem:
            result.problems.append(problem)
            continue
        if theme.name in seen:
            taken_by = seen[theme.name].name
            result.problems.append(ThemeFileError(path, f"name {theme.name!r} is already used by {taken_by}"))
            continue
        seen[theme.name] = path
        result.themes.append(theme)
    return result


class AppThemes:
    """The themes an app offers: the shipped ones, then the user's own files in `user_dir` over them (a user theme
    with a shipped theme's name replaces it until its file goes). Problems are collected in `problems`."""

    def __init__(self, app: App, user_dir: Path) -> None:
        self.app = app
        self.user_dir = user_dir
        self.problems: list[ThemeFileError] = []
        self._bundled: dict[str, Theme] = {}
        self._user_names: set[str] = set()
        loaded = load_theme_folder(bundled_themes_dir(), trusted=True)
        self.problems.extend(loaded.problems)
        for theme in loaded.themes:
            self._bundled[theme.name] = theme
            app.register_theme(theme)
        self.register_user_themes()

    def register_user_themes(self) -> set[str]:
        """Register the user's theme files; returns the user theme names before and after (any of them may have a
        new definition)."""
        loaded = load_theme_folder(self.user_dir)
        self.problems.extend(loaded.problems)
        changed = set(self._user_names)
        for name in self._user_names - {theme.name for theme in loaded.themes}:
            self.app.unregister_theme(name)
            if name in self._bundled:
                self.app.register_theme(self._bundled[name])
        for theme in loaded.themes:
            self.app.register_theme(theme)
        self._user_names = {theme.name for theme in loaded.themes}
        return changed | self._user_names

    def reload(self) -> list[ThemeFileError]:
        """Pick up added, changed and removed user theme files; returns the problems met."""
        self.problems = []
        changed = self.register_user_themes()
        app = self.app
        if app.theme not in app.available_themes:
            app.theme = DEFAULT_THEME
        elif app.theme in changed:
            app.refresh_css(animate=False)
            app.theme_changed_signal.publish(app.current_theme)
        return self.problems
