"""Checks that a scratchpad name is safe to use as a folder name for the pad's own environment."""

from __future__ import annotations

MAX_NAME_LENGTH = 128


def validate_pad_name(name: object) -> str:
    """Return `name` unchanged if it is a usable pad name, else raise ValueError saying what is wrong with it (the
    model may send anything as a name)."""
    if not isinstance(name, str) or not name:
        raise ValueError("A scratchpad name must be a non-empty string, e.g. 'main'.")
    problem = _name_problem(name)
    if problem:
        raise ValueError(f"Invalid scratchpad name {name!r}: {problem}. Use a short plain name such as 'analysis'.")
    return name


def _name_problem(name: str) -> str | None:
    if len(name) > MAX_NAME_LENGTH:
        return f"it is longer than {MAX_NAME_LENGTH} characters"
    if "\x00" in name:
        return "it contains a NUL character"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return "it contains a control character"
    for forbidden in (":", "/", "\\"):
        if forbidden in name:
            return f"it contains {forbidden!r}"
    if ".." in name:
        return "it contains '..'"
    if set(name) == {"."}:
        return "it consists only of dots"
    if name.endswith((".", " ")):
        return "it ends with a dot or a space"
    if not name.strip():
        return "it is only whitespace"
    return None
