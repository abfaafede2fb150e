"""What each message of a conversation is, in Anton's terms: one the user typed, a tool reply, a summary; and its text.

Saving (`history_store`), summarising (`summarise`) and resuming (`conversations`) all read messages the same way,
so these rules live here, below all three.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

COMPACTED_MARKER = "[COMPACTED CONTEXT — REFERENCE ONLY]"
OLDER_MARKER = "[Context summary of earlier conversation]"  # Anton 2.26.5's summaries: the record follows this line
_STAMP = re.compile(r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\] ")


def is_user_turn(message: dict[str, Any]) -> bool:
    """A message the user typed, as opposed to the tool results sent back to the model (Anton's rule)."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if not isinstance(content, list):
        return True
    return not any(isinstance(block, dict) and block.get("type") == "tool_result" for block in content)


def is_summary_message(message: dict[str, Any]) -> bool:
    """The message that stands for the earlier turns (ours or Anton's, found by the marker it starts with)."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str):
        return False
    return content.lstrip().startswith((COMPACTED_MARKER, OLDER_MARKER))


def typed_turns(history: list[dict[str, Any]]) -> int:
    """How many messages of `history` the user typed (tool results and summaries are not among them)."""
    return sum(1 for m in history if is_user_turn(m) and not is_summary_message(m))


def count_user_turns(history: Sequence[Any]) -> int:
    """User turns as Anton counts them (a summary among them)."""
    return len([message for message in history if isinstance(message, dict) and is_user_turn(message)])


def message_text(message: dict[str, Any]) -> str:
    """The text of a message: a string content, or its text blocks joined by blank lines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(
            str(block.get("text", "")) for block in content if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def strip_stamp(text: str) -> str:
    """Anton stamps what the user typed with its send time, ``[YYYY-MM-DD HH:MM] ``; the text without it."""
    match = _STAMP.match(text)
    return text[match.end() :] if match else text


def user_text(message: dict[str, Any]) -> str:
    """What the user typed in this message, as they typed it: of a list, its first text block (the rest are
    notes added to the turn, or what came with a picture)."""
    content = message.get("content")
    if isinstance(content, list):
        first = next((b for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
        return strip_stamp(str(first.get("text", ""))) if first is not None else ""
    return strip_stamp(message_text(message))
