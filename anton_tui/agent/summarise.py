"""Summarising the older part of a conversation into one message, in the shape Anton writes and recognises.

The summary is an ordinary user message whose text starts with Anton's marker, ``[COMPACTED CONTEXT — REFERENCE
ONLY]``, then a line telling the model it is a record and not a request, then the summary. When the kept part starts
with a user message, a short assistant reply follows the summary so the roles keep alternating. A history that
already starts with a summary gets it *updated* (the old summary goes to the summariser as the previous record)
instead of being summarised again. Anton finds its summaries by the same marker, so either program continues the
other's.

Before the old turns go, their ledger (`agent.ledger`: every message the user typed, cell, command, file, tool call
and memory write in them, word for word) is put in front of them in the request, so the record keeps the
instructions and names what was run even when the turns themselves must be clipped to fit.

`choose_cut` decides where old turns end: at the start of a user turn around 60% of the way, never inside a tool
call and its result, always leaving the last few messages as they are. `summarise_old_turns` asks the coding model.
`drop_oldest` is the fallback that makes room without a model: the oldest messages go, and a marker message says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anton_tui.agent.ledger import Ledger, ledger_brief
from anton_tui.agent.messages import COMPACTED_MARKER, OLDER_MARKER, is_summary_message, is_user_turn

if TYPE_CHECKING:
    from anton_tui.llm.client import LLMClient

SUMMARY_NOTE = (
    "Summary of the earlier part of this conversation, kept for reference only; it is not a new request. The most "
    "recent user message comes first: if the user has since changed direction, narrowed the task or cancelled "
    "something, follow that and do not pick up work this record describes as superseded."
)
SEPARATOR = "Understood; I will use that record as background."
SEPARATORS = frozenset({SEPARATOR, "Understood — using that as reference.", "Understood."})  # ours and Anton's
DROPPED_NOTE = "{count} earlier messages were dropped to fit the model's context window; no summary of them exists."
RESULT_STUB = "[Result removed: too large for the context window. Narrow the request and call the tool again.]"

SUMMARY_SYSTEM = (
    "You condense the earlier part of a conversation between a user and a coding agent into a short, factual "
    "record that the agent keeps in place of those turns. Write only these sections, leaving out any that would be "
    "empty:\n"
    "## Goal: what the user wants in the end\n"
    "## Constraints: requirements, preferences and things not to do\n"
    "## Completed: work done, each as `action -> outcome`\n"
    "## Active state: variables, data, files and where they are now\n"
    "## Blocked: what is stuck, and why\n"
    "## Decisions: choices made, and the reason\n"
    "## Remaining: what is left to do\n\n"
    "Keep the dates of key events where they matter. When a PREVIOUS RECORD is given, update it with the new turns "
    "instead of starting over, and drop anything the user has since cancelled or replaced. When a LEDGER of the "
    "turns is given, keep every instruction and decision it lists (or say what replaced it) and name each command, "
    "cell and file it lists, however briefly. Stay under about 1,500 words."
)
SUMMARY_MAX_TOKENS = 8192
MIN_MESSAGES = 6
KEEP_RECENT = 4
CUT_SHARE = 0.6
MIN_NEW_SHARE = 0.10  # summarising less new material than this share of what stays is not worth a model call
CLIP_TEXT, CLIP_BLOCK, CLIP_TOOL = 2000, 1000, 500


# --------------------------------------------------------------------------- the summary message


def summary_text(message: dict[str, Any]) -> str:
    """The record inside a summary message, without the marker line and the note under it."""
    content = str(message.get("content", "")).lstrip()
    if content.startswith(OLDER_MARKER):
        return content[len(OLDER_MARKER) :].strip()
    body = content[len(COMPACTED_MARKER) :].lstrip("\n")
    note, gap, rest = body.partition("\n\n")
    return rest.strip() if gap else note.strip()


def summary_message(record: str) -> dict[str, Any]:
    return {"role": "user", "content": f"{COMPACTED_MARKER}\n{SUMMARY_NOTE}\n\n{record.strip()}"}


def summary_prefix(history: list[dict[str, Any]]) -> int:
    """How many leading messages are a summary and the stock reply after it (0, 1 or 2)."""
    if not history or not is_summary_message(history[0]):
        return 0
    reply = history[1] if len(history) > 1 else {}
    if reply.get("role") == "assistant" and isinstance(reply.get("content"), str) and reply["content"] in SEPARATORS:
        return 2
    return 1


def current_summary(history: list[dict[str, Any]]) -> str | None:
    return summary_text(history[0]) if summary_prefix(history) else None


def with_summary(record: str, recent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The new history: the summary, a reply when the kept part starts with a user message, then the kept part."""
    head = [summary_message(record)]
    if recent and recent[0].get("role") == "user":
        head.append({"role": "assistant", "content": SEPARATOR})
    return head + list(recent)


# --------------------------------------------------------------------------- where to cut


def _is_tool_reply(message: dict[str, Any]) -> bool:
    return message.get("role") == "user" and not is_user_turn(message)


def safe_cut(history: list[dict[str, Any]], cut: int) -> bool:
    """True when history[cut:] can stand on its own: it does not start with the results of a call left behind."""
    return 0 < cut < len(history) and not _is_tool_reply(history[cut])


def choose_cut(history: list[dict[str, Any]], *, keep_recent: int = KEEP_RECENT) -> int:
    """Index where the part to summarise ends (history[:cut] is folded), or 0 when nothing should be folded.

    Prefers the start of a user turn at or before 60% of the way; inside one long turn it walks back to a message
    that is not a tool result. At least `keep_recent` messages stay, and at least two messages beyond an existing
    summary must go, or there is nothing worth a new record.
    """
    if len(history) < MIN_MESSAGES:
        return 0
    prefix = summary_prefix(history)
    target = min(max(int(len(history) * CUT_SHARE), 1), len(history) - keep_recent)
    for cut in range(target, prefix + 1, -1):
        if is_user_turn(history[cut]):
            return cut
    cut = target
    while cut - prefix >= 2 and not safe_cut(history, cut):
        cut -= 1
    return cut if cut - prefix >= 2 and safe_cut(history, cut) else 0


def worth_summarising(history: list[dict[str, Any]], cut: int) -> bool:
    """Skip the model call when the new material is small next to what is kept (Anton's 10% rule)."""
    new = sum(_size(m) for m in history[summary_prefix(history) : cut])
    kept = sum(_size(m) for m in history[cut:])
    return cut > 0 and new >= MIN_NEW_SHARE * (new + kept)


def _size(message: dict[str, Any]) -> int:
    content = message.get("content", "")
    return len(content) if isinstance(content, str) else len(json.dumps(content, ensure_ascii=False, default=str))


# --------------------------------------------------------------------------- asking the model


def clip(text: str, limit: int, *, head_only: bool = False) -> str:
    """At most about `limit` characters: the head alone, or a third from the head and the rest from the tail
    (where an error's cause usually is), with a note of how much was left out."""
    if len(text) <= limit:
        return text
    if head_only:
        return f"{text[:limit]} [... {len(text) - limit} characters left out ...]"
    head = limit // 3
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters left out ...]\n{text[-tail:]}"


def serialise(messages: list[dict[str, Any]]) -> str:
    """The turns to summarise as plain lines: ``[role]: text``, ``[assistant/tool_use]: name(input)``,
    ``[tool_result]: content``, each clipped."""
    lines = []
    for message in messages:
        role = message.get("role", "unknown")
        content = message.get("content", "")
        if isinstance(content, str):
            lines.append(f"[{role}]: {clip(content, CLIP_TEXT)}")
            continue
        for block in content if isinstance(content, list) else []:
            kind = block.get("type")
            if kind == "text":
                lines.append(f"[{role}]: {clip(str(block.get('text', '')), CLIP_BLOCK)}")
            elif kind == "tool_use":
                arguments = clip(
                    json.dumps(block.get("input", {}), ensure_ascii=False, default=str), CLIP_TOOL, head_only=True
                )
                lines.append(f"[{role}/tool_use]: {block.get('name', '')}({arguments})")
            elif kind == "tool_result":
                lines.append(f"[tool_result]: {clip(_result_text(block.get('content', '')), CLIP_TOOL)}")
    return "\n".join(lines)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return str(content)


def summary_request(old: list[dict[str, Any]], *, budget_chars: int, ledger: Ledger | None = None) -> str:
    """What the summariser is asked: the previous record (if the old part starts with one), the ledger of the new
    turns (when given) and the new turns themselves, clipped to what is left of the budget."""
    prefix = summary_prefix(old)
    previous = summary_text(old[0]) if prefix else ""
    brief = clip(ledger_brief(ledger), max(2000, budget_chars // 2)) if ledger is not None and ledger.turns else ""
    room = max(2000, budget_chars - len(previous) - len(brief) - len(SUMMARY_SYSTEM))
    turns = clip(serialise(old[prefix:]), room)
    parts = []
    if previous:
        parts.append(f"PREVIOUS RECORD (update it with the new turns; do not repeat it unchanged):\n{previous}")
    if brief:
        parts.append(brief)
    if not parts:
        return turns
    return "\n\n".join([*parts, f"NEW TURNS TO FOLD IN:\n{turns}"])


class SummaryFailed(Exception):
    """The coding model gave no usable summary; `str()` says why in one line."""


@dataclass(frozen=True)
class Summary:
    record: str
    folded: int  # messages of the old history replaced by the record
    history: list[dict[str, Any]]  # the new history


async def summarise_old_turns(
    llm: LLMClient, history: list[dict[str, Any]], cut: int, *, budget_chars: int, ledger: Ledger | None = None
) -> Summary:
    """Ask the coding model for the record of history[:cut], shown `ledger` of those turns when given. Raises
    `SummaryFailed`."""
    request = summary_request(history[:cut], budget_chars=budget_chars, ledger=ledger)
    max_tokens = min(SUMMARY_MAX_TOKENS, llm.coding.max_tokens)
    try:
        response = await llm.code(
            system=SUMMARY_SYSTEM, messages=[{"role": "user", "content": request}], max_tokens=max_tokens
        )
    except Exception as exc:
        raise SummaryFailed(str(exc) or type(exc).__name__) from exc
    record = (response.text or "").strip()
    if not record:
        raise SummaryFailed("the coding model returned an empty summary")
    return Summary(record, cut, with_summary(record, history[cut:]))


# --------------------------------------------------------------------------- making room without a model


def _chars(message: dict[str, Any]) -> int:
    return len(json.dumps(message, ensure_ascii=False, default=str)) + 2  # with the ", " that joins it to the next


def drop_oldest(
    history: list[dict[str, Any]], max_chars: int, *, keep_recent: int = KEEP_RECENT
) -> tuple[list[dict[str, Any]], int]:
    """Drop the oldest messages (a summary at the top stays) until the history's JSON text is at most `max_chars`,
    or until only `keep_recent` remain. The dropped ones are replaced by a marker message saying how many went.
    Returns (new history, how many messages were dropped)."""
    prefix = summary_prefix(history)
    previous = summary_text(history[0]) if prefix else ""
    tail = [0] * (len(history) + 1)
    for index in range(len(history) - 1, -1, -1):
        tail[index] = tail[index + 1] + _chars(history[index])
    best: tuple[list[dict[str, Any]], int] = (history, 0)
    for cut in range(prefix + 1, len(history) - keep_recent + 1):
        if not safe_cut(history, cut):
            continue
        dropped = cut - prefix
        note = DROPPED_NOTE.format(count=dropped)
        head = with_summary(f"{previous}\n\n{note}" if previous else note, history[cut : cut + 1])[:-1]
        best = (head + history[cut:], dropped)
        if sum(_chars(m) for m in head) + tail[cut] <= max_chars:
            break
    return best


def stub_largest_results(history: list[dict[str, Any]], max_chars: int) -> tuple[list[dict[str, Any]], int]:
    """Replace the largest tool results (earliest first among equals) with a short stub until the history's JSON
    text is at most `max_chars`. Every call keeps a result. Returns (new history, how many were stubbed)."""
    results = []
    for m_index, message in enumerate(history):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for b_index, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append((-_chars(block), m_index, b_index))
    new = list(history)
    total = sum(_chars(m) for m in history)
    stubbed = 0
    for _order, m_index, b_index in sorted(results):
        if total <= max_chars:
            break
        blocks = list(new[m_index]["content"])
        before = _chars(blocks[b_index])
        blocks[b_index] = {**blocks[b_index], "content": RESULT_STUB}
        new[m_index] = {**new[m_index], "content": blocks}
        total -= before - _chars(blocks[b_index])
        stubbed += 1
    return new, stubbed
