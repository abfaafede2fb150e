"""What the fake LLM server should answer (`Reply`) and what it was asked (`RecordedRequest`).

Replies are provider-neutral: the same `Reply.text("Hi")` is served as an Anthropic Messages
answer or an OpenAI chat completion, streamed or not, depending on the request.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count(1)


@dataclass
class ToolCallSpec:
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    raw_arguments: str | None = None  # sent verbatim instead of json.dumps(input), e.g. broken JSON

    def __post_init__(self) -> None:
        if self.id is None:
            self.id = f"toolu_fake_{next(_ids):04d}"


@dataclass
class Reply:
    content: str = ""  # the answer's text (before any tool calls)
    calls: list[ToolCallSpec] = field(default_factory=list)  # tool calls, after the text
    stop_reason: str | None = None  # Anthropic vocabulary: end_turn, tool_use, max_tokens
    status: int = 200
    error_message: str | None = None
    error_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    drop_after: int | None = None  # content chunks sent before the connection is cut
    usage: tuple[int, int] | None = None  # (input_tokens, output_tokens); estimated when None
    chunk_size: int | None = None
    delay: float = 0.0  # seconds before the answer starts
    chunk_delay: float = 0.0  # seconds between streamed chunks

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def text(cls, text: str, **options: Any) -> Reply:
        return cls(content=text, **options)

    @classmethod
    def tool_call(cls, name: str, input: dict[str, Any] | None = None, *, text_before: str = "",
                  id: str | None = None, **options: Any) -> Reply:
        return cls(content=text_before, calls=[ToolCallSpec(name, dict(input or {}), id)], **options)

    @classmethod
    def tool_calls(cls, calls: list[Any], *, text_before: str = "", **options: Any) -> Reply:
        """`calls` holds `(name, input)` pairs, `{"name", "input", "id"?}` dicts or `ToolCallSpec`s."""
        return cls(content=text_before, calls=[_as_spec(call) for call in calls], **options)

    @classmethod
    def malformed_tool_call(cls, name: str, raw_arguments: str, **options: Any) -> Reply:
        return cls(calls=[ToolCallSpec(name, raw_arguments=raw_arguments)], **options)

    @classmethod
    def error(cls, status: int, message: str | None = None, *, retry_after_ms: int | None = None,
              retry_after: float | None = None, error_type: str | None = None,
              headers: dict[str, str] | None = None) -> Reply:
        all_headers = dict(headers or {})
        if retry_after_ms is not None:
            all_headers["retry-after-ms"] = str(retry_after_ms)
        if retry_after is not None:
            all_headers["retry-after"] = str(retry_after)
        return cls(status=status, error_message=message, error_type=error_type, headers=all_headers)

    @classmethod
    def drop_after_chunks(cls, n: int, text: str = "This answer will be cut off somewhere in the middle.",
                          **options: Any) -> Reply:
        return cls(content=text, drop_after=n, **options)

    @classmethod
    def max_tokens(cls, text: str, **options: Any) -> Reply:
        return cls(content=text, stop_reason="max_tokens", **options)

    # -- derived --------------------------------------------------------------------------
    @property
    def is_error(self) -> bool:
        return self.status >= 400

    @property
    def final_stop_reason(self) -> str:
        return self.stop_reason or ("tool_use" if self.calls else "end_turn")


def _as_spec(call: Any) -> ToolCallSpec:
    if isinstance(call, ToolCallSpec):
        return call
    if isinstance(call, dict):
        return ToolCallSpec(call["name"], dict(call.get("input") or {}), call.get("id"), call.get("raw_arguments"))
    name, arguments = call
    return ToolCallSpec(name, dict(arguments))


@dataclass
class RecordedRequest:
    """One request the fake server received, whatever became of it."""

    api: str  # "anthropic" | "openai" | "unknown"
    path: str
    body: dict[str, Any]
    headers: dict[str, str]  # lower-cased names
    reply: Reply | None = None
    rejected: str | None = None  # why the server refused it (invalid request, script ran out)
    outcome: str = "pending"  # answered | error | dropped | rejected | client hung up

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def max_tokens(self) -> int | None:
        return self.body.get("max_tokens") or self.body.get("max_completion_tokens")

    @property
    def tool_choice(self) -> Any:
        return self.body.get("tool_choice")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or []:
            names.append(tool["function"]["name"] if "function" in tool else tool.get("name"))
        return names

    @property
    def system(self) -> str:
        """The system prompt, however the API carried it."""
        if self.api == "anthropic":
            system = self.body.get("system") or ""
            if isinstance(system, list):
                return "\n".join(block.get("text", "") for block in system)
            return system
        return "\n".join(
            m.get("content") or "" for m in self.messages if m.get("role") in ("system", "developer")
        )

    @property
    def api_key(self) -> str | None:
        """The key the client sent, from `x-api-key` or a bearer `authorization` header."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None
