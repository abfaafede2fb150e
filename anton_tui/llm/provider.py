"""The contract every model provider fulfils, plus what they share: retries and error wording.

A provider takes an `LLMRequest` (Anthropic-style messages and tools) and either streams events
or returns a whole `LLMResponse`. `BaseProvider` wraps each attempt in the same retry policy
(rate limits, overloaded or failing servers, timeouts, dropped connections) and turns SDK
exceptions into one-line `LLMError`s. Nothing here imports an SDK.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import socket
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from anton_tui.llm.errors import LLMError, key_hint, short
from anton_tui.llm.events import (
    LLMResponse,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolUseDelta,
    ToolUseEnd,
    ToolUseStart,
    Usage,
    parse_tool_arguments,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LLMRequest:
    model: str
    messages: list[dict[str, Any]]
    max_tokens: int
    system: str = ""
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None  # Anthropic style: {"type": "auto"|"any"|"tool"|"none", "name"?}


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry a failed call before giving up."""

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_server_wait: float = 60.0  # a server asking for a longer pause than this is not waited on

    def delay_for(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry number `attempt + 1`, or None when we should stop."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None and retry_after > 0:
            return retry_after if retry_after <= self.max_server_wait else None
        backoff = min(self.base_delay * 2**attempt, self.max_delay)
        return backoff * (1 - 0.25 * random.random())


@runtime_checkable
class LLMProvider(Protocol):
    name: str  # "anthropic" | "openai" | "openai-compatible"
    display_name: str

    def stream(self, request: LLMRequest) -> AsyncGenerator[StreamEvent, None]: ...

    async def complete(self, request: LLMRequest) -> LLMResponse: ...

    async def aclose(self) -> None: ...


class ResponseBuilder:
    """Collects a streamed answer into an `LLMResponse` while handing out the matching events."""

    def __init__(self) -> None:
        self.text = ""
        self._tools: dict[str, dict[str, Any]] = {}
        self._open_tools: list[str] = []
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason: StopReason | None = None

    def add_text(self, text: str) -> TextDelta:
        self.text += text
        return TextDelta(text)

    def start_tool(self, tool_id: str, name: str) -> ToolUseStart:
        self._tools[tool_id] = {"name": name, "parts": []}
        self._open_tools.append(tool_id)
        return ToolUseStart(tool_id, name)

    def add_tool_json(self, tool_id: str, part: str) -> ToolUseDelta:
        self._tools[tool_id]["parts"].append(part)
        return ToolUseDelta(tool_id, part)

    def end_tool(self, tool_id: str) -> ToolUseEnd:
        if tool_id in self._open_tools:
            self._open_tools.remove(tool_id)
        return ToolUseEnd(tool_id)

    def end_open_tools(self) -> list[ToolUseEnd]:
        return [self.end_tool(tool_id) for tool_id in list(self._open_tools)]

    @property
    def has_tools(self) -> bool:
        return bool(self._tools)

    def finish(self) -> LLMResponse:
        calls = []
        for tool_id, tool in self._tools.items():
            arguments, problem = parse_tool_arguments("".join(tool["parts"]))
            calls.append(ToolCall(tool_id, tool["name"], arguments, problem))
        stop = self.stop_reason or ("tool_use" if calls else "end_turn")
        return LLMResponse(self.text, calls, Usage(self.input_tokens, self.output_tokens), stop)


class BaseProvider:
    """Retry loop and error translation shared by the SDK-backed providers."""

    name = "provider"
    display_name = "Provider"

    def __init__(self, *, retry: RetryPolicy | None = None, timeout: float = 600.0) -> None:
        self.retry = retry or RetryPolicy()
        self.timeout = timeout

    # -- to be provided by subclasses -------------------------------------------------
    def _stream_once(self, request: LLMRequest) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        raise NotImplementedError

    def _sdk(self) -> ModuleType:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None

    def preload(self) -> None:
        """Import the SDK now (it takes a second or two) rather than on the first call."""
        self._sdk()

    # -- public API --------------------------------------------------------------------
    async def stream(self, request: LLMRequest) -> AsyncGenerator[StreamEvent, None]:
        """Stream one answer. Failures before anything was emitted are retried; after that the
        error carries the text received so far."""
        attempt = 0
        while True:
            emitted = False
            try:
                async with aclosing(self._stream_once(request)) as events:
                    async for event in events:
                        emitted = True
                        yield event
                return
            except LLMError as err:
                wait = None if emitted else self._retry_wait(err, attempt)
                if wait is None:
                    raise
            attempt += 1
            await asyncio.sleep(wait)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return await self._with_retries(lambda: self._complete_once(request))

    # -- shared helpers ----------------------------------------------------------------
    async def _with_retries(self, call: Callable[[], Awaitable[LLMResponse]]) -> LLMResponse:
        attempt = 0
        while True:
            try:
                return await call()
            except LLMError as err:
                wait = self._retry_wait(err, attempt)
                if wait is None:
                    raise
            attempt += 1
            await asyncio.sleep(wait)

    def _retry_wait(self, err: LLMError, attempt: int) -> float | None:
        if not err.retryable:
            return None
        wait = self.retry.delay_for(attempt, err.retry_after)
        if wait is not None:
            log.info("%s; retrying in %.2fs (retry %d of %d)", err, wait, attempt + 1, self.retry.max_retries)
        return wait

    def error(self, model: str, kind: str, message: str, **extra: Any) -> LLMError:
        return LLMError(self.display_name, model, kind, message, **extra)

    def translate(self, exc: BaseException, model: str, partial_text: str = "") -> LLMError:
        """Turn whatever the SDK or the transport raised into one clear `LLMError`."""
        if isinstance(exc, LLMError):
            return exc
        sdk = self._sdk()
        if isinstance(exc, sdk.APIStatusError):
            return self._status_error(exc, model, partial_text)
        if isinstance(exc, sdk.APITimeoutError) or _is_transport_timeout(exc):
            return self.error(
                model, "timeout", f"the request timed out{_kept(partial_text)}.", partial_text=partial_text
            )
        if isinstance(exc, sdk.APIConnectionError) or _is_transport_error(exc):
            cause = _root_cause(exc)
            if partial_text:
                message = f"the connection dropped mid-answer ({cause}){_kept(partial_text)}."
            elif _never_connected(exc):
                message = f"could not reach {self._endpoint()} ({cause})."
            else:
                message = f"the connection to {self._endpoint()} dropped ({cause})."
            return self.error(model, "connection", message, partial_text=partial_text)
        return self.error(
            model, "unknown", f"unexpected error: {type(exc).__name__}: {short(str(exc))}", partial_text=partial_text
        )

    def _endpoint(self) -> str:
        return "the server"

    def _status_error(self, exc: Any, model: str, partial_text: str) -> LLMError:
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        err = self._classify_status(exc, headers, model, partial_text)
        should_retry = headers.get("x-should-retry")  # the server's own verdict wins
        if should_retry in ("true", "false"):
            err.retryable = should_retry == "true"
        return err

    def _classify_status(self, exc: Any, headers: Any, model: str, partial_text: str) -> LLMError:
        status = getattr(exc, "status_code", None) or 0
        error_type, server_message = _error_details(getattr(exc, "body", None), getattr(exc, "message", ""))
        detail = short(server_message).rstrip(".")
        code = f"HTTP {status}" if status >= 400 else ""  # errors sent inside a stream arrive with 200
        quoted = f" ({': '.join(filter(None, (code, detail)))})" if code or detail else ""
        lowered = f"{error_type} {server_message}".lower()
        extra: dict[str, Any] = {"status_code": status, "partial_text": partial_text}

        if status == 401 or error_type == "authentication_error":
            return self.error(model, "auth", f"the API key was rejected{quoted}. {key_hint(self.name)}", **extra)
        if status == 403 or error_type == "permission_error":
            return self.error(model, "permission", f"access denied{quoted}; check the key may use this model.", **extra)
        if "insufficient_quota" in lowered or "credit balance" in lowered or "billing" in lowered:
            return self.error(model, "quota", f"the account has no quota or credit left{quoted}.", **extra)
        if status == 404 or error_type == "not_found_error":
            return self.error(
                model, "not_found", f"model or endpoint not found{quoted}; check the model name.", **extra
            )
        if status == 413 or _looks_like_context_overflow(lowered):
            message = f"the conversation is too long for the model{quoted}."
            return self.error(model, "context_too_long", message, **extra)
        if status == 429 or error_type == "rate_limit_error":
            retry_after = parse_retry_after(headers)
            later = f" Try again in {retry_after:.0f} s." if retry_after and retry_after >= 1 else ""
            return self.error(model, "rate_limit", f"rate limited{quoted}.{later}", retry_after=retry_after, **extra)
        if status == 529 or error_type == "overloaded_error":
            message = f"the service is overloaded{quoted}."
            return self.error(model, "overloaded", message, retry_after=parse_retry_after(headers), **extra)
        if status == 408:
            return self.error(model, "timeout", f"the server timed out{quoted}.", **extra)
        if status == 409 or status >= 500 or error_type == "api_error":
            retry_after = parse_retry_after(headers)
            return self.error(model, "server", f"server error{quoted}.", retry_after=retry_after, **extra)
        if status in (400, 422) or error_type == "invalid_request_error":
            return self.error(model, "bad_request", f"the request was refused{quoted}.", **extra)
        return self.error(model, "unknown", f"unexpected response{quoted}.", **extra)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds a server asked us to wait, from `retry-after-ms` or `retry-after` (seconds or a date)."""
    try:
        return float(headers.get("retry-after-ms")) / 1000
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())


def _error_details(body: Any, fallback: str) -> tuple[str, str]:
    """(error type, message) from an Anthropic or OpenAI error body."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            error_type = str(inner.get("type") or inner.get("code") or "")
            code = str(inner.get("code") or "")
            message = str(inner.get("message") or "")
            if code and code not in error_type:
                error_type = f"{error_type} {code}".strip()
            return error_type, message or fallback
        if isinstance(inner, str):
            return "", inner
    return "", fallback or ""


def _looks_like_context_overflow(text: str) -> bool:
    markers = ("prompt is too long", "context length", "context_length", "maximum context", "too many tokens")
    return any(marker in text for marker in markers)


def _kept(partial_text: str) -> str:
    return f"; the {len(partial_text)} characters received so far were kept" if partial_text else ""


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and everything that caused it, outermost first."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    return chain


def _root_cause(exc: BaseException) -> str:
    root = _causes(exc)[-1]
    return short(str(root), 120) or type(root).__name__


def _never_connected(exc: BaseException) -> bool:
    return any(
        isinstance(e, (ConnectionRefusedError, socket.gaierror)) or type(e).__name__ == "ConnectError"
        for e in _causes(exc)
    )


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP transport's own error classes (raised while reading a stream's body)."""
    found: list[type[BaseException]] = []
    for module_name in ("httpx2", "httpx"):
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        found.append(module.TransportError)
    return tuple(found)


def _is_transport_error(exc: BaseException) -> bool:
    return isinstance(exc, (*_transport_errors(), ConnectionError))


def _is_transport_timeout(exc: BaseException) -> bool:
    timeouts = []
    for module_name in ("httpx2", "httpx"):
        try:
            timeouts.append(__import__(module_name).TimeoutException)
        except ImportError:
            continue
    return isinstance(exc, (*tuple(timeouts), TimeoutError))


def secret_text(value: Any) -> str | None:
    """A key from a settings field that may be a pydantic SecretStr, a plain str or None."""
    if value is None:
        return None
    if hasattr(value, "get_secret_value"):
        value = value.get_secret_value()
    text = str(value).strip()
    return text or None
