"""Finding text in a conversation: which entries of a transcript hold a query, with a short excerpt around it.

Case is ignored and runs of spaces match any whitespace, so a phrase is found across a line break. The chat uses it
for the parts of a conversation that are no longer on screen (pruned from a long chat, or before a resumed one's
last entries).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

EXCERPT = 70  # characters around a match


@dataclass(frozen=True)
class Found:
    """An entry holding the query: its place in the transcript, its kind and an excerpt around the first hit."""

    entry: int
    kind: str
    excerpt: str


def pattern(query: str) -> re.Pattern[str] | None:
    """The query as a case-blind pattern where spaces match any whitespace; None for a blank query."""
    words = query.split()
    if not words:
        return None
    return re.compile(r"\s+".join(re.escape(word) for word in words), re.IGNORECASE)


def excerpt(text: str, match: re.Match[str], width: int = EXCERPT) -> str:
    start = max(0, match.start() - width // 3)
    end = min(len(text), max(match.end(), start + width))
    flat = " ".join(text[start:end].split())
    return ("…" if start else "") + flat + ("…" if end < len(text) else "")


def find_in_transcript(entries: list[Any], query: str, *, before: int | None = None) -> list[Found]:
    """The entries (of `transcript()`, oldest first, only those before index `before` when given) whose text holds
    `query`."""
    compiled = pattern(query)
    if compiled is None:
        return []
    found = []
    for index, entry in enumerate(entries[:before]):
        match = compiled.search(entry.text or "")
        if match is not None:
            found.append(Found(index, entry.kind, excerpt(entry.text, match)))
    return found
