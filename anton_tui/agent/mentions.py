"""Finds the `@path` mentions in a message and checks them: the file must be in the workspace and not too big.

The files that pass become a short note added to the user's turn, asking the agent to read each one in a
scratchpad (the message itself is left as typed). A missing file, a folder, a path leading out of the workspace or a
file over `SIZE_CAP` becomes a `MentionRefused` line for the chat and is left out of the note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SIZE_CAP = 1024 * 1024
"""Bytes: a mentioned file bigger than this is refused (the agent can still be asked to read it in parts)."""

MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s@`'\"]+)")


@dataclass(frozen=True)
class MentionRefused:
    """A mention that is not passed on to the agent, and why, in one line for the chat."""

    path: str
    reason: str

    @property
    def line(self) -> str:
        return f"@{self.path}: {self.reason}"


@dataclass(frozen=True)
class MentionCheck:
    files: tuple[tuple[str, int], ...]  # (path relative to the workspace, size in bytes)
    refused: tuple[MentionRefused, ...]

    @property
    def note(self) -> str | None:
        """The text added to the user's turn, or None when no mentioned file passed."""
        if not self.files:
            return None
        lines = "\n".join(f"- {path} ({_size(size)})" for path, size in self.files)
        return (
            "[Files mentioned by the user with @, paths relative to the workspace folder. Read each one in a "
            "scratchpad before answering; they are not in this message.]\n" + lines
        )


def mentioned_paths(text: str) -> list[str]:
    """The `@path` mentions of a message, in order, each once (trailing punctuation left out)."""
    found: list[str] = []
    for match in MENTION.finditer(text):
        path = match.group(1).rstrip(".,;:!?)]}")
        if path and path not in found:
            found.append(path)
    return found


def check_mentions(text: str, root: Path, *, size_cap: int = SIZE_CAP) -> MentionCheck:
    """Check every mention of `text` against the workspace `root` (reads only file sizes)."""
    root = Path(root).resolve()
    files: list[tuple[str, int]] = []
    refused: list[MentionRefused] = []
    for path in mentioned_paths(text):
        target = (root / path).resolve()
        if target != root and root not in target.parents:
            refused.append(MentionRefused(path, "outside the workspace folder; not passed to Anton."))
            continue
        try:
            stat = target.stat()
        except OSError:
            refused.append(MentionRefused(path, "no such file in the workspace; not passed to Anton."))
            continue
        if not target.is_file():
            refused.append(MentionRefused(path, "not a file; not passed to Anton."))
        elif stat.st_size > size_cap:
            refused.append(
                MentionRefused(
                    path,
                    f"{_size(stat.st_size)} is over the {_size(size_cap)} limit for mentioned files; "
                    "not passed to Anton (ask for the part you need instead).",
                )
            )
        else:
            files.append((target.relative_to(root).as_posix(), stat.st_size))
    return MentionCheck(tuple(files), tuple(refused))


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
