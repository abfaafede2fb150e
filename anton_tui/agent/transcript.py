"""A loaded conversation as the chat shows it: what the user typed, the answers, each tool call with its result,
and the summary standing for earlier turns.

`transcript` reads Anton's message list (ours or Anton's) without changing it; the chat, the early view of a
conversation being resumed and the Markdown export all draw from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anton_tui.agent.messages import is_user_turn, message_text, user_text
from anton_tui.agent.summarise import summary_prefix, summary_text

if TYPE_CHECKING:
    from anton_tui.agent.ledger import Ledger


@dataclass(frozen=True)
class TranscriptEntry:
    """One thing to show of a loaded conversation: "user" (what was typed; `index` is its place in the history,
    for rewinding), "answer" (Markdown), "tool" (a call: `tool`, `input`, its result in `text`, `success`) or
    "summary" (the record standing for the earlier turns, with the `ledgers` of what they held when this program
    summarised them)."""

    kind: str
    text: str
    index: int
    tool: str | None = None
    input: Any = None
    success: bool = True
    ledgers: tuple[Ledger, ...] = ()


def transcript(history: list[dict[str, Any]], ledgers: tuple[Ledger, ...] = ()) -> list[TranscriptEntry]:
    """The conversation as the chat shows it, oldest first (tool results sit with their calls); a summary entry
    carries `ledgers`."""
    results: dict[str, dict[str, Any]] = {}
    for message in history:
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[str(block.get("tool_use_id"))] = block
    entries: list[TranscriptEntry] = []
    skip = summary_prefix(history)
    if skip:
        entries.append(TranscriptEntry("summary", summary_text(history[0]), 0, ledgers=ledgers))
    for index, message in enumerate(history[skip:], start=skip):
        content = message.get("content")
        if message.get("role") == "user":
            if is_user_turn(message):
                entries.append(TranscriptEntry("user", user_text(message), index))
            continue
        if isinstance(content, str):
            if content.strip():
                entries.append(TranscriptEntry("answer", content, index))
            continue
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                entries.append(TranscriptEntry("answer", str(block["text"]), index))
            elif block.get("type") == "tool_use":
                result = results.get(str(block.get("id")), {})
                entries.append(
                    TranscriptEntry(
                        "tool",
                        message_text({"content": result.get("content", "")}),
                        index,
                        tool=str(block.get("name")),
                        input=block.get("input"),
                        success=not result.get("is_error", False),
                    )
                )
    return entries
