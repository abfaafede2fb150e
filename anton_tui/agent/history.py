"""Keeps the message history valid for the model APIs.

Every `tool_use` block the model sent must be answered by a `tool_result` in the next user message. A cancel or a
crash can leave one unanswered; `seal_dangling_tool_uses` answers it with a synthetic result before the next request.
"""

from __future__ import annotations

from typing import Any

CANCELLED_CLOSING = "(cancelled)"
"""The answer that closes a turn cancelled before the model answered, so the next prompt follows an answer."""


def _tool_use_ids(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [block["id"] for block in content if block.get("type") == "tool_use"]


def _answered_ids(message: dict[str, Any] | None) -> set[str]:
    if message is None or message.get("role") != "user" or not isinstance(message.get("content"), list):
        return set()
    return {b.get("tool_use_id") for b in message["content"] if b.get("type") == "tool_result"}


def seal_dangling_tool_uses(history: list[dict[str, Any]], note: str) -> int:
    """Add a synthetic, failed tool_result for each unanswered tool_use, in place. Returns how many were sealed."""
    sealed = 0
    index = 0
    while index < len(history):
        ids = _tool_use_ids(history[index])
        if not ids:
            index += 1
            continue
        following = history[index + 1] if index + 1 < len(history) else None
        missing = [tool_id for tool_id in ids if tool_id not in _answered_ids(following)]
        if missing:
            blocks = [
                {"type": "tool_result", "tool_use_id": tool_id, "content": note, "is_error": True}
                for tool_id in missing
            ]
            if following is not None and following.get("role") == "user":
                content = following["content"]
                if isinstance(content, str):
                    content = [{"type": "text", "text": content}] if content else []
                following["content"] = blocks + list(content)
            else:
                history.insert(index + 1, {"role": "user", "content": blocks})
            sealed += len(missing)
        index += 1
    return sealed


def close_interrupted_round(history: list[dict[str, Any]], completed: list[dict[str, Any]], note: str) -> None:
    """After a cancel: answer the last assistant message's tool calls (finished ones with their real results, the
    rest with `note`), then end on an assistant message so the next prompt follows the usual alternation."""
    ids = _tool_use_ids(history[-1]) if history else []
    if ids:
        finished = {block["tool_use_id"]: block for block in completed if block.get("type") == "tool_result"}
        history.append(
            {
                "role": "user",
                "content": [
                    finished.get(tool_id)
                    or {"type": "tool_result", "tool_use_id": tool_id, "content": note, "is_error": True}
                    for tool_id in ids
                ],
            }
        )
    if history and history[-1].get("role") == "user":
        history.append({"role": "assistant", "content": [{"type": "text", "text": CANCELLED_CLOSING}]})
