"""Talks to Anthropic's Messages API through the official SDK (imported only when first used).

The engine already speaks Anthropic-style content blocks, so this provider mostly passes
messages through, tidies what the API would refuse (empty text blocks), and turns the raw
stream events into the provider-neutral ones.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from types import ModuleType
from typing import Any

from anton_tui.llm.errors import key_hint
from anton_tui.llm.events import LLMResponse, StopReason, StreamComplete, StreamEvent, ToolCall, Usage
from anton_tui.llm.provider import BaseProvider, LLMRequest, ResponseBuilder, RetryPolicy

DEFAULT_BASE_URL = "https://api.anthropic.com"

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
}


def normalise_stop_reason(reason: str | None) -> StopReason:
    return _STOP_REASONS.get(reason or "", "other")


class AnthropicProvider(BaseProvider):
    name = "anthropic"
    display_name = "Anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
    ) -> None:
        super().__init__(retry=retry, timeout=timeout)
        self.api_key = api_key
        self.base_url = base_url
        self._client: Any = None

    def _sdk(self) -> ModuleType:
        import anthropic

        return anthropic

    def _endpoint(self) -> str:
        return self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL

    def _get_client(self, model: str) -> Any:
        if self._client is None:
            key = self.api_key or os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                raise self.error(model, "auth", f"no API key is set. {key_hint(self.name)}", retryable=False)
            sdk = self._sdk()
            self._client = sdk.AsyncAnthropic(
                api_key=key,
                base_url=self.base_url,
                max_retries=0,  # retries are ours: same policy for every provider, and for streams too
                timeout=sdk.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": [_clean_message(message) for message in request.messages],
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = [
                {"name": t["name"], "description": t.get("description", ""), "input_schema": t["input_schema"]}
                for t in request.tools
            ]
            if request.tool_choice:
                params["tool_choice"] = request.tool_choice
        return params

    async def _stream_once(self, request: LLMRequest) -> AsyncGenerator[StreamEvent, None]:
        builder = ResponseBuilder()
        tool_ids: dict[int, str] = {}
        finished = False
        try:
            client = self._get_client(request.model)
            stream = await client.messages.create(**self._params(request), stream=True)
            async with stream:
                async for event in stream:
                    kind = event.type
                    if kind == "message_start":
                        usage = event.message.usage
                        builder.input_tokens = _total_input(usage)
                        builder.output_tokens = usage.output_tokens or 0
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "tool_use":
                            tool_ids[event.index] = block.id
                            yield builder.start_tool(block.id, block.name)
                        elif block.type == "text" and block.text:
                            yield builder.add_text(block.text)
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta" and delta.text:
                            yield builder.add_text(delta.text)
                        elif delta.type == "input_json_delta" and event.index in tool_ids and delta.partial_json:
                            yield builder.add_tool_json(tool_ids[event.index], delta.partial_json)
                    elif kind == "content_block_stop":
                        if event.index in tool_ids:
                            yield builder.end_tool(tool_ids.pop(event.index))
                    elif kind == "message_delta":
                        if event.delta.stop_reason:
                            builder.stop_reason = normalise_stop_reason(event.delta.stop_reason)
                        builder.output_tokens = event.usage.output_tokens or builder.output_tokens
                        if event.usage.input_tokens:
                            builder.input_tokens = _total_input(event.usage)
                    elif kind == "message_stop":
                        finished = True
        except Exception as exc:
            raise self.translate(exc, request.model, builder.text) from exc
        if not finished:
            raise self.error(
                request.model,
                "connection",
                "the answer stopped before it was complete (the stream ended early)"
                + (f"; the {len(builder.text)} characters received so far were kept." if builder.text else "."),
                partial_text=builder.text,
            )
        for end in builder.end_open_tools():
            yield end
        yield StreamComplete(builder.finish())

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        try:
            client = self._get_client(request.model)
            message = await client.messages.create(**self._params(request))
        except Exception as exc:
            raise self.translate(exc, request.model) from exc
        text = "".join(block.text for block in message.content if block.type == "text")
        calls = []
        for block in message.content:
            if block.type == "tool_use":
                if isinstance(block.input, dict):
                    calls.append(ToolCall(block.id, block.name, block.input))
                else:
                    calls.append(ToolCall(block.id, block.name, {}, "arguments were not a JSON object"))
        usage = Usage(_total_input(message.usage), message.usage.output_tokens or 0)
        return LLMResponse(text, calls, usage, normalise_stop_reason(message.stop_reason))


def _total_input(usage: Any) -> int:
    """Input tokens including cached ones, which is what fills the context window."""
    return sum(
        getattr(usage, name, None) or 0
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


def _clean_message(message: dict[str, Any]) -> dict[str, Any]:
    """Drop empty text blocks, which the API refuses, without losing anything else."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = [b for b in content if not (b.get("type") == "text" and not str(b.get("text", "")).strip())]
    if not blocks:
        blocks = [{"type": "text", "text": "(no content)"}]
    return {**message, "content": blocks}
