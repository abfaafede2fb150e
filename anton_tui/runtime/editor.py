"""Editing a text in the user's own editor: `$VISUAL`, else `$EDITOR`, on a temporary file that is removed after.

The UI suspends itself around `edit_text` so that the editor has the terminal. The file is private (mode 0600) and
lives in the system's temporary folder, never in the project or in `~/.anton`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


class EditorError(Exception):
    """The editor could not be started, or it failed; the text stays as it was."""


@dataclass(frozen=True)
class Edited:
    text: str
    changed: bool


def editor_command(environ: Mapping[str, str] | None = None) -> list[str] | None:
    """The editor to run, split like a shell would, or None when neither `$VISUAL` nor `$EDITOR` is set."""
    env = os.environ if environ is None else environ
    for name in ("VISUAL", "EDITOR"):
        value = (env.get(name) or "").strip()
        if value:
            return shlex.split(value)
    return None


def edit_text(text: str, command: list[str], *, suffix: str = ".md") -> Edited:
    """Run `command` on a temporary file holding `text`, wait for it, and return what the file then holds. A
    trailing newline the editor added is dropped. Raises EditorError (the text unchanged) when the editor fails."""
    fd, name = tempfile.mkstemp(prefix="anton-prompt-", suffix=suffix)
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            done = subprocess.run([*command, str(path)], check=False)
        except OSError as exc:
            raise EditorError(f"could not start {command[0]}: {exc.strerror or exc}") from None
        if done.returncode != 0:
            raise EditorError(f"{command[0]} exited with status {done.returncode}; the prompt is unchanged")
        try:
            edited = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise EditorError("the edited text is not UTF-8; the prompt is unchanged") from None
    finally:
        path.unlink(missing_ok=True)
    if edited.endswith("\n") and not text.endswith("\n"):
        edited = edited[:-1]
    return Edited(edited, edited != text)
