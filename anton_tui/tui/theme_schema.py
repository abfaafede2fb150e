"""The schema of a theme file, checked with pydantic: names, colours and CSS variables a theme may set.

Imported only when a theme file needs checking (a user's file, or a shipped one that fails to load).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from textual.color import Color, ColorParseError

_COLOUR_FIELDS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
)
_VARIABLE_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


def validate_theme(data: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of `textual.theme.Theme` for a file's data; raises ValueError with the first problem
    as ``where: what`` (for example ``primary: 'blurple' is not a colour``)."""
    try:
        return _ThemeFile.model_validate(data).model_dump()
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        message = first["msg"].removeprefix("Value error, ")
        raise ValueError(f"{where}: {message}") from None


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
