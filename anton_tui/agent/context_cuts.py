"""Cuts the largest parts of a conversation down until a request fits the model's context window, naming each one.

A tool result is replaced by a stub, as before (the model can ask again, narrower). A text the user sent (a typed or
pasted message, or a note added to it: the `@` files, a `!` command's output) is cut in the middle instead: its head
and its tail stay, where an instruction usually is, with a line in place of the middle saying how much was left out.
The largest part goes first, so what is cut is what made the request too long, and each cut text is named for the
notice (`TextCut`). A cut text is changed in its own message object, so whatever holds that message (the running
turn's ledger) sees the message as it was sent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from anton_tui.agent.context_window import messages_chars
from anton_tui.agent.events import TextCut
from anton_tui.agent.messages import is_summary_message, is_user_turn
from anton_tui.agent.summarise import RESULT_STUB

MIN_KEPT = 2000  # characters of a cut text that stay at least (head and tail together)
CUT_LINE = "\n\n[… {count:,} characters of this {kind} were cut here to fit the model's context window …]\n\n"
NOTE_NAMES = (
    ("[Files mentioned by the user with @", "the note on your @ files"),
    ("[The user ran a shell command", "the output of your ! command"),
)


@dataclass(frozen=True, slots=True)
class Cuts:
    """What `cut_largest` did: the new history, how many tool results it stubbed, and the texts it cut."""

    history: list[dict[str, Any]]
    stubbed: int = 0
    texts: tuple[TextCut, ...] = ()

    @property
    def any(self) -> bool:
        return bool(self.stubbed or self.texts)


@dataclass(frozen=True, slots=True)
class _Part:
    size: int  # characters of its JSON text
    message: int  # index in the history
    block: int | None  # index in the message's content list; None when the content is the text itself
    kind: str  # result | message | note
    what: str


def note_name(text: str) -> str:
    """How the notice names a note added to the user's message."""
    return next((name for prefix, name in NOTE_NAMES if text.startswith(prefix)), "a note added to your message")


def cut_text(text: str, keep: int, kind: str) -> str:
    """`text` with its middle replaced by a line saying how many characters went; about `keep` characters stay."""
    keep = max(0, min(keep, len(text)))
    if keep >= len(text):
        return text
    head = keep // 2
    line = CUT_LINE.format(count=len(text) - keep, kind=kind)
    return f"{text[:head]}{line}{text[len(text) - (keep - head) :]}"


def cut_largest(
    history: list[dict[str, Any]],
    max_chars: int,
    *,
    turn_message: dict[str, Any] | None = None,
    only_turn: bool = False,
) -> Cuts:
    """Cut the largest parts of `history` (largest first; tool results before texts of the same size) until its
    JSON text is at most `max_chars`. `turn_message` is the message that began the running turn (named "your
    message"); with `only_turn`, only its own texts are cut."""
    new = list(history)
    total = messages_chars(new)
    stubbed = 0
    texts: list[TextCut] = []
    parts = sorted(_parts(new, turn_message), key=lambda part: (-part.size, part.kind != "result", part.message))
    for part in parts:
        if total <= max_chars:
            break
        if only_turn and new[part.message] is not turn_message:
            continue
        if part.kind == "result":
            blocks = list(new[part.message]["content"])
            blocks[part.block or 0] = {**blocks[part.block or 0], "content": RESULT_STUB}
            new[part.message] = {**new[part.message], "content": blocks}
            stubbed += 1
        else:
            cut = _cut_part(new[part.message], part, total - max_chars)
            if cut is None:
                continue
            texts.append(cut)
        total = messages_chars(new)
    return Cuts(new, stubbed, tuple(texts))


def _parts(history: list[dict[str, Any]], turn_message: dict[str, Any] | None) -> Iterator[_Part]:
    for index, message in enumerate(history):
        content = message.get("content")
        if message.get("role") != "user" or is_summary_message(message):
            continue
        mine = "your message" if message is turn_message else "an earlier message"
        if isinstance(content, str):
            yield _Part(_size(content), index, None, "message", mine)
            continue
        typed = is_user_turn(message)
        for b_index, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result" and block.get("content") != RESULT_STUB:
                yield _Part(_size(block), index, b_index, "result", "a tool result")
            elif typed and block.get("type") == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if b_index == 0:
                    yield _Part(_size(text), index, b_index, "message", mine)
                else:
                    yield _Part(_size(text), index, b_index, "note", note_name(text))


def _cut_part(message: dict[str, Any], part: _Part, excess: int) -> TextCut | None:
    """Cut the text of `part` in `message` (in place) by enough to take `excess` JSON characters off, or None
    when it is too short to cut."""
    content = message["content"]
    text = content if part.block is None else content[part.block]["text"]
    escaped_per_char = max(1.0, (part.size - 2) / max(1, len(text)))  # newlines and quotes take two in JSON
    line_chars = len(CUT_LINE.format(count=len(text), kind="message"))
    keep = len(text) - math.ceil(excess * 1.02 / escaped_per_char) - line_chars
    keep = max(keep, MIN_KEPT)
    if keep + line_chars >= len(text):
        return None
    shorter = cut_text(text, keep, "message" if part.kind == "message" else "note")
    if part.block is None:
        message["content"] = shorter
    else:
        blocks = list(content)
        blocks[part.block] = {**blocks[part.block], "text": shorter}
        message["content"] = blocks
    return TextCut(what=part.what, kind=part.kind, chars_before=len(text), chars_after=len(shorter))


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))
