"""Talks to OpenAI's Chat Completions API, or any server that imitates it, through the OpenAI SDK.

Local servers (Ollama, vLLM, llama.cpp, LM Studio) are reached by giving a base URL; they need
no key, so a placeholder is sent. The engine's Anthropic-style content blocks are translated
to chat messages on the way out (tool_use → tool_calls, tool_result → role "tool", tools →
functions, forced tool choice → function choice) and the answer is translated back.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncGenerator
from types import ModuleType
from typing import Any

from anton_tui.llm.errors import key_hint
from anton_tui.llm.events import (
    LLMResponse,
    StopReason,
    StreamComplete,
    StreamEvent,
    ToolCall,
    Usage,
    parse_tool_arguments,
)
from anton_tui.llm.provider import BaseProvider, LLMRequest, ResponseBuilder, RetryPolicy

OFFICIAL_HOST = "api.openai.com"
PLACEHOLDER_KEY = "not-needed"  # local servers ignore the key, but the SDK insists on one


class OpenAIProvider(BaseProvider):
    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
        compatible: bool | None = None,
    ) -> None:
        """`compatible` (default: any base URL other than OpenAI's own) means a server that needs no
        key and expects `max_tokens` rather than OpenAI's newer `max_completion_tokens`."""
        super().__init__(retry=retry, timeout=timeout)
        self.api_key = api_key
        self.base_url = base_url.rstrip("/") if base_url else None
        if compatible is None:
            compatible = bool(self.base_url) and OFFICIAL_HOST not in (self.base_url or "")
        self.compatible = compatible
        self.name = "openai-compatible" if self.compatible else "openai"
        self.display_name = f"OpenAI-compatible server at {self.base_url}" if self.compatible else "OpenAI"
        self._client: Any = None

    def _sdk(self) -> ModuleType:
        import openai

        return openai

    def _endpoint(self) -> str:
        return self.base_url or f"https://{OFFICIAL_HOST}/v1"

    def _get_client(self, model: str) -> Any:
        if self._client is None:
            key = self.api_key or (None if self.compatible else os.environ.get("OPENAI_API_KEY"))
            if not key and not self.compatible:
                raise self.error(model, "auth", f"no API key is set. {key_hint(self.name)}", retryable=False)
            sdk = self._sdk()
            self._client = sdk.AsyncOpenAI(
                api_key=key or PLACEHOLDER_KEY,
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
            "messages": to_openai_messages(request.system, request.messages),
        }
        # OpenAI's newer models only accept max_completion_tokens; most local servers only max_tokens.
        params["max_tokens" if self.compatible else "max_completion_tokens"] = request.max_tokens
        if request.tools:
            params["tools"] = to_openai_tools(request.tools)
            choice = to_openai_tool_choice(request.tool_choice)
            if choice is not None:
                params["tool_choice"] = choice
        return params

    async def _stream_once(self, request: LLMRequest) -> AsyncGenerator[StreamEvent, None]:
        builder = ResponseBuilder()
        tool_ids: dict[int, str] = {}
        finish_reason: str | None = None
        try:
            client = self._get_client(request.model)
            stream = await client.chat.completions.create(
                **self._params(request), stream=True, stream_options={"include_usage": True}
            )
            async with stream:
                async for chunk in stream:
                    if chunk.usage is not None:
                        builder.input_tokens = chunk.usage.prompt_tokens or 0
                        builder.output_tokens = chunk.usage.completion_tokens or 0
                    for choice in chunk.choices[:1]:
                        delta = choice.delta
                        if delta is not None and delta.content:
                            yield builder.add_text(delta.content)
                        for call in (delta.tool_calls if delta is not None else None) or []:
                            if call.index not in tool_ids:
                                for end in builder.end_open_tools():
                                    yield end
                                tool_id = call.id or f"call_{uuid.uuid4().hex[:12]}"
                                tool_ids[call.index] = tool_id
                                name = (call.function.name if call.function else None) or ""
                                yield builder.start_tool(tool_id, name)
                            if call.function is not None and call.function.arguments:
                                yield builder.add_tool_json(tool_ids[call.index], call.function.arguments)
                        if choice.finish_reason:
                            finish_reason = choice.finish_reason
                            for end in builder.end_open_tools():
                                yield end
        except Exception as exc:
            raise self.translate(exc, request.model, builder.text) from exc
        if finish_reason is None:
            raise self.error(
                request.model,
                "connection",
                "the answer stopped before it was complete (the stream ended early)"
                + (f"; the {len(builder.text)} characters received so far were kept." if builder.text else "."),
                partial_text=builder.text,
            )
        builder.stop_reason = normalise_finish_reason(finish_reason, has_tools=builder.has_tools)
        yield StreamComplete(builder.finish())

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        try:
            client = self._get_client(request.model)
            completion = await client.chat.completions.create(**self._params(request))
        except Exception as exc:
            raise self.translate(exc, request.model) from exc
        if not completion.choices:
            raise self.error(request.model, "unknown", "the server returned an answer with no choices.")
        choice = completion.choices[0]
        message = choice.message
        calls = []
        for call in message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is None:
                continue
            arguments, problem = parse_tool_arguments(function.arguments or "")
            calls.append(ToolCall(call.id or f"call_{uuid.uuid4().hex[:12]}", function.name, arguments, problem))
        usage = Usage()
        if completion.usage is not None:
            usage = Usage(completion.usage.prompt_tokens or 0, completion.usage.completion_tokens or 0)
        stop = normalise_finish_reason(choice.finish_reason, has_tools=bool(calls))
        return LLMResponse(message.content or "", calls, usage, stop)


def normalise_finish_reason(reason: str | None, *, has_tools: bool) -> StopReason:
    if reason in ("tool_calls", "function_call"):
        return "tool_use"
    if reason == "length":
        return "max_tokens"
    if reason == "stop":
        # Some local servers report "stop" even when the answer is a tool call.
        return "tool_use" if has_tools else "end_turn"
    return "other"


def to_openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for tool in tools
    ]


def to_openai_tool_choice(choice: dict[str, Any] | None) -> Any:
    if not choice:
        return None
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": choice["name"]}}
    return {"any": "required", "auto": "auto", "none": "none"}.get(str(kind))


def to_openai_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic-style conversation → chat messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        role, content = message["role"], message.get("content")
        if not isinstance(content, list):
            out.append({"role": role, "content": content if content is not None else ""})
        elif role == "assistant":
            out.append(_assistant_message(content))
        else:
            out.extend(_user_messages(role, content))
    return out


def _assistant_message(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)},
        }
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    entry: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        entry["tool_calls"] = calls
    return entry


def _user_messages(role: str, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Tool results must directly follow the assistant's tool calls, so they go first.
    results: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            results.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": _result_text(block)})
        elif kind == "text":
            texts.append(block.get("text", ""))
        else:
            texts.append(f"[{kind} content omitted: not supported by this provider]")
    if texts:
        results.append({"role": role, "content": "\n\n".join(texts)})
    return results


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        content = "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    text = str(content)
    if block.get("is_error") and not text.lower().startswith("error"):
        text = f"Error: {text}"
    return text
