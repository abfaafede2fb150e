"""Loads colour themes from TOML files: the ones shipped with the app and the user's own in $ANTON_HOME/themes/.

A theme file names the theme and its base colours (the fields of `textual.theme.Theme`) plus optional CSS
`variables`. A file that cannot be read or does not validate is reported with a one-line reason and skipped; it is
never rewritten.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "anton-dark"

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_COLOUR_FIELDS = (
    "primary", "secondary", "accent", "foreground", "background", "surface", "panel", "success", "warning", "error",
)
_VARIABLE_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


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


class _ThemeFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    primary: str
    secondary: str | None = None
    accent: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    success: str | None = None
    warning: str | None = None
    error: str | None = None
    dark: bool = True
    variables: dict[str, str] = {}

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
            raise ValueError("use letters, digits, '-', '_' or '.'")
        return value

    @field_validator(*_COLOUR_FIELDS)
    @classmethod
    def _valid_colour(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                Color.parse(value)
            except ColorParseError:
                raise ValueError(f"{value!r} is not a colour") from None
        return value

    @field_validator("variables")
    @classmethod
    def _valid_variables(cls, variables: dict[str, str]) -> dict[str, str]:
        for name, value in variables.items():
            if not _VARIABLE_NAME.match(name):
                raise ValueError(f"{name!r} is not a variable name")
            if not value.strip() or any(char in value for char in ";{}\n"):
                raise ValueError(f"{name} = {value!r} is not a CSS value")
        return variables


def load_theme_file(path: Path) -> Theme:
    """Read one theme file; raises ThemeFileError naming the file and the first problem found."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ThemeFileError(path, f"cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ThemeFileError(path, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ThemeFileError(path, f"is not valid TOML ({error})") from None
    try:
        spec = _ThemeFile.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        message = first["msg"].removeprefix("Value error, ")
        raise ThemeFileError(path, f"{where}: {message}") from None
    return Theme(**spec.model_dump())


@dataclass
class ThemeFolder:
    """The themes found in one folder and the files that had to be skipped."""

    themes: list[Theme] = field(default_factory=list)
    problems: list[ThemeFileError] = field(default_factory=list)


def load_theme_folder(folder: Path) -> ThemeFolder:
    """Load every `*.toml` in `folder` (a missing folder has no themes); a second file with a taken name is skipped."""
    result = ThemeFolder()
    if not folder.is_dir():
        return result
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            theme = load_theme_file(path)
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
