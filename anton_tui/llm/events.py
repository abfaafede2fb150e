"""What a model call produces, in one shape for every provider.

A streamed answer arrives as a sequence of small events (text pieces, tool calls being
written) and always ends with `StreamComplete` carrying the whole `LLMResponse`. This is the
nerve signal the rest of the engine listens to; it never sees a provider's own wire format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for. `parse_error` is set when its arguments were not valid JSON."""

    id: str
    name: str
    input: dict[str, Any]
    parse_error: str | None = None


@dataclass(frozen=True, slots=True)
class LLMResponse:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end_turn"

    def content_blocks(self) -> list[dict[str, Any]]:
        """The answer as Anthropic-style content blocks, ready to append to a conversation."""
        blocks: list[dict[str, Any]] = []
        if self.text:
            blocks.append({"type": "text", "text": self.text})
        for call in self.tool_calls:
            blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
        return blocks

    def to_message(self) -> dict[str, Any]:
        return {"role": "assistant", "content": self.content_blocks()}


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolUseStart:
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolUseDelta:
    id: str
    json_delta: str


@dataclass(frozen=True, slots=True)
class ToolUseEnd:
    id: str


@dataclass(frozen=True, slots=True)
class StreamComplete:
    response: LLMResponse


StreamEvent = TextDelta | ToolUseStart | ToolUseDelta | ToolUseEnd | StreamComplete


def parse_tool_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Decode a tool call's JSON arguments; on failure return `({}, reason)` instead of raising."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        snippet = raw if len(raw) <= 120 else raw[:117] + "..."
        return {}, f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): {snippet}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None
