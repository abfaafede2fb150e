"""The engine's single door to language models, with two roles behind it.

The planning role holds the conversation (streamed, tools allowed); the coding role does cheap
background work (memory compaction, identity, post-mortems). Both can ask for structured
output, which is validated into pydantic models. Think of planning as deliberate thought and
coding as the quick reflexes the rest of the brain leans on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

from anton_tui.llm.errors import LLMError
from anton_tui.llm.events import LLMResponse, StreamEvent
from anton_tui.llm.provider import LLMProvider, LLMRequest, RetryPolicy, secret_text
from anton_tui.llm.structured import build_structured_tool, firmer_instruction, read_structured_answer

DEFAULT_MAX_TOKENS = 8192
STRUCTURED_RETRY_CEILING = 16384  # the retry budget doubles, but never past this unless max_tokens is higher

PROVIDER_ALIASES = {
    "anthropic": "anthropic",
    "claude": "anthropic",
    "openai": "openai",
    "openai-compatible": "openai-compatible",
    "openai_compatible": "openai-compatible",
    "local": "openai-compatible",
    "ollama": "openai-compatible",
}


@dataclass(frozen=True)
class ModelRole:
    provider: LLMProvider
    model: str
    max_tokens: int = DEFAULT_MAX_TOKENS


class LLMClient:
    def __init__(self, planning: ModelRole, coding: ModelRole | None = None) -> None:
        self.planning = planning
        self.coding = coding or planning

    @classmethod
    def from_settings(cls, settings: Any, *, retry: RetryPolicy | None = None, timeout: float = 600.0) -> LLMClient:
        """Build both roles from a settings object (see `anton_tui.config.Settings`).

        A misconfigured provider does not fail here; its first call raises a clear `LLMError`.
        """
        max_tokens = int(getattr(settings, "max_tokens", None) or DEFAULT_MAX_TOKENS)
        providers: dict[str, LLMProvider] = {}

        def role(prefix: str) -> ModelRole:
            kind = str(getattr(settings, f"{prefix}_provider", None) or "anthropic").strip().lower()
            if kind not in providers:
                providers[kind] = provider_from_settings(kind, settings, prefix=prefix, retry=retry, timeout=timeout)
            return ModelRole(providers[kind], str(getattr(settings, f"{prefix}_model")), max_tokens)

        return cls(role("planning"), role("coding"))

    async def warm_up(self) -> None:
        """Load the SDKs in a worker thread, so the first real call does not pause the app."""
        for provider in {id(r.provider): r.provider for r in (self.planning, self.coding)}.values():
            preload = getattr(provider, "preload", None)
            if preload is not None:
                await asyncio.to_thread(preload)

    async def aclose(self) -> None:
        for provider in {id(r.provider): r.provider for r in (self.planning, self.coding)}.values():
            await provider.aclose()

    # -- conversation (planning role) ----------------------------------------------------
    async def plan_stream(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        tool_choice: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        request = self._request(self.planning, system, messages, tools, max_tokens, tool_choice)
        async with aclosing(self.planning.provider.stream(request)) as events:
            async for event in events:
                yield event

    async def plan(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        tool_choice: dict[str, Any] | None = None,
    ) -> LLMResponse:
        request = self._request(self.planning, system, messages, tools, max_tokens, tool_choice)
        return await self.planning.provider.complete(request)

    # -- background work (coding role) ---------------------------------------------------
    async def code(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        tool_choice: dict[str, Any] | None = None,
    ) -> LLMResponse:
        request = self._request(self.coding, system, messages, tools, max_tokens, tool_choice)
        return await self.coding.provider.complete(request)

    # -- structured output ---------------------------------------------------------------
    async def generate_object(
        self, schema: Any, *, system: str, messages: list[dict[str, Any]], max_tokens: int | None = None
    ) -> Any:
        """An instance of `schema` (a pydantic model, or a list for `list[Model]`) from the planning model."""
        return await self._generate(self.planning, schema, system, messages, max_tokens)

    async def generate_object_code(
        self, schema: Any, *, system: str, messages: list[dict[str, Any]], max_tokens: int | None = None
    ) -> Any:
        """Like `generate_object`, on the cheaper coding model."""
        return await self._generate(self.coding, schema, system, messages, max_tokens)

    async def _generate(
        self, role: ModelRole, schema: Any, system: str, messages: list[dict[str, Any]], max_tokens: int | None
    ) -> Any:
        tool, validator, is_list = build_structured_tool(schema)
        name = tool["name"]
        request = self._request(role, system, messages, [tool], max_tokens, {"type": "tool", "name": name})
        try:
            response = await role.provider.complete(request)
            value, problem = read_structured_answer(response, name, validator, is_list)
        except LLMError as err:
            if not (err.kind == "bad_request" and "tool_choice" in err.message.lower()):
                raise
            # Some servers refuse a forced tool choice; ask in words instead.
            value, problem = None, "the server refused a forced tool choice"
            request = replace(request, tool_choice=None)
        if problem is None:
            return value

        budget = min(request.max_tokens * 2, max(role.max_tokens, STRUCTURED_RETRY_CEILING))
        budget = max(budget, request.max_tokens)
        instruction = firmer_instruction(name, problem)
        retry = replace(request, max_tokens=budget, system=f"{system}\n\n{instruction}" if system else instruction)
        response = await role.provider.complete(retry)
        value, second_problem = read_structured_answer(response, name, validator, is_list)
        if second_problem is None:
            return value
        raise LLMError(
            role.provider.display_name,
            role.model,
            "structured_output",
            f"no usable {name} result: {second_problem} (first attempt: {problem}; "
            f"retried once with max_tokens={budget}).",
        )

    @staticmethod
    def _request(
        role: ModelRole,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None,
        tool_choice: dict[str, Any] | None,
    ) -> LLMRequest:
        return LLMRequest(
            model=role.model,
            messages=list(messages),
            max_tokens=max_tokens or role.max_tokens,
            system=system or "",
            tools=list(tools) if tools else None,
            tool_choice=tool_choice if tools else None,
        )


def provider_from_settings(
    kind: str, settings: Any, *, prefix: str = "planning", retry: RetryPolicy | None = None, timeout: float = 600.0
) -> LLMProvider:
    """The provider named `kind` ("anthropic", "openai", "openai-compatible"), configured from settings."""
    from anton_tui.llm.anthropic_provider import AnthropicProvider
    from anton_tui.llm.openai_provider import OpenAIProvider

    canonical = PROVIDER_ALIASES.get(kind.strip().lower())
    if canonical == "anthropic":
        return AnthropicProvider(
            api_key=secret_text(getattr(settings, "anthropic_api_key", None)),
            base_url=getattr(settings, "anthropic_base_url", None) or None,
            retry=retry,
            timeout=timeout,
        )
    if canonical in ("openai", "openai-compatible"):
        base_url = getattr(settings, "openai_base_url", None) or None
        if canonical == "openai-compatible" and not base_url:
            return UnconfiguredProvider(
                "openai-compatible",
                "OpenAI-compatible server",
                "no server address is set. Set ANTON_OPENAI_BASE_URL (for example http://localhost:11434/v1), "
                "or run /setup.",
            )
        return OpenAIProvider(
            api_key=secret_text(getattr(settings, "openai_api_key", None)),
            base_url=str(base_url) if base_url else None,
            retry=retry,
            timeout=timeout,
        )
    variable = f"ANTON_{prefix.upper()}_PROVIDER"
    return UnconfiguredProvider(
        kind,
        f"Provider {kind!r}",
        f"unknown provider set in {variable}; use anthropic, openai or openai-compatible.",
    )


class UnconfiguredProvider:
    """Stands in for a provider whose settings are unusable; every call explains what to fix."""

    def __init__(self, name: str, display_name: str, problem: str) -> None:
        self.name = name
        self.display_name = display_name
        self.problem = problem

    def _fail(self, request: LLMRequest) -> LLMError:
        return LLMError(self.display_name, request.model, "config", self.problem, retryable=False)

    async def stream(self, request: LLMRequest) -> AsyncGenerator[StreamEvent, None]:
        raise self._fail(request)
        yield  # pragma: no cover - makes this an async generator

    async def complete(self, request: LLMRequest) -> LLMResponse:
        raise self._fail(request)

    async def aclose(self) -> None:
        return None
