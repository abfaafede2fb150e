"""Conversation summaries on disk: one Markdown file per saved conversation, beside the project's other records
(``<project>/.anton/conversations/<session>.md``), never inside Anton's ``{session}_history.json``.

The front matter holds the conversation's `title`, when it `started` and `ended` (its last message), how many
`turns` it had, and `history` (the size and modification time of the history file it was made from: a summary whose
history file has moved on since is out of date). The body has the sections the summariser writes (topics,
decisions, preferences, pending items). `agent.conversation_summary` writes them; recall and the daily reflection
read them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from anton_tui.memory.files.locking import atomic_write

_SAFE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class ConversationSummary:
    """The summary of one conversation (see the module docstring)."""

    session_id: str
    title: str
    started: str
    ended: str
    turns: int
    body: str
    history: str = ""  # "<size>:<mtime_ns>" of the history file it summarises

    def render(self) -> str:
        import yaml

        front = {"session": self.session_id, "title": self.title, "started": self.started, "ended": self.ended,
                 "turns": self.turns, "history": self.history}  # fmt: skip
        dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100)
        return f"---\n{dumped}---\n# {self.title}\n\n{self.body.strip()}\n"

    @property
    def date(self) -> str:
        """The day it ended, ``YYYY-MM-DD``."""
        return (self.ended or self.started)[:10]


def parse_summary(text: str, session_id: str) -> ConversationSummary | None:
    """A summary file's content; None when it is not one (the file is left as it is)."""
    import yaml

    if not text.startswith("---\n"):
        return None
    front_text, sep, body = text[4:].partition("\n---\n")
    if not sep:
        return None
    try:
        front = yaml.safe_load(front_text)
    except yaml.YAMLError:
        return None
    if not isinstance(front, dict):
        return None
    heading, _, rest = body.partition("\n")
    turns = front.get("turns")
    return ConversationSummary(
        session_id=str(front.get("session") or session_id),
        title=str(front.get("title") or ""),
        started=str(front.get("started") or ""),
        ended=str(front.get("ended") or ""),
        turns=turns if isinstance(turns, int) and not isinstance(turns, bool) else 0,
        body=(rest if heading.startswith("# ") else body).strip(),
        history=str(front.get("history") or ""),
    )


class SummaryFiles:
    """The conversation summaries of one project."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def path(self, session_id: str) -> Path:
        if not _SAFE.fullmatch(session_id):
            raise ValueError(f"Invalid session id {session_id!r}")
        return self.folder / f"{session_id}.md"

    def read(self, session_id: str) -> ConversationSummary | None:
        try:
            text = self.path(session_id).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        return parse_summary(text, session_id)

    def write(self, summary: ConversationSummary) -> Path:
        path = self.path(summary.session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, summary.render().encode("utf-8"))
        return path

    def session_ids(self) -> list[str]:
        """The conversations with a summary, newest first (by their ids, which are their start times)."""
        try:
            names = [
                path.stem for path in self.folder.iterdir() if path.suffix == ".md" and not path.name.startswith(".")
            ]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(names, reverse=True)

    def recent(self, count: int, *, excluding: str | None = None) -> list[ConversationSummary]:
        """The `count` summaries of the conversations that ended last (the one `excluding` names left out)."""
        found = [summary for session_id in self.session_ids()[: count * 4 + 4]
                 if session_id != excluding and (summary := self.read(session_id)) is not None]  # fmt: skip
        found.sort(key=lambda summary: summary.ended or summary.started, reverse=True)
        return found[:count]
