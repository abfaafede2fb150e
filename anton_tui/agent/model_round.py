"""One request of a turn to the planning model: made to fit the context window, streamed, its answer kept.

`run` sizes the request and makes room in the history when it would not fit (`context_fit`), streams the answer as
`AssistantTextDelta` events, adds the answer (its text and tool calls) to the history and saves it, and counts the
tokens used (`UsageUpdated`, with the session's totals). A provider that refuses the request as too long before any
text came gets room made and the request again. `partial_text` is what streamed of the answer so far, which the
session keeps when the turn is cancelled or fails midway.

A `ChatSession` holds one `ModelRound`; what it needs of the session is `ModelRoundHost`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from anton_tui.agent.context_fit import ContextHost
from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta, UsageUpdated

if TYPE_CHECKING:
    from anton_tui.agent.context_fit import ContextKeeper
    from anton_tui.agent.turn_memory import TurnMemory
    from anton_tui.llm.events import LLMResponse


class ModelRoundHost(ContextHost, Protocol):
    """What a request needs of its session, besides what making room needs: the keeper of the context window and the
    messages at the front of every request."""

    @property
    def context(self) -> ContextKeeper: ...

    @property
    def turn_memory(self) -> TurnMemory: ...


class ModelRound:
    """The requests of one session to its planning model (see the module docstring)."""

    def __init__(self, host: ModelRoundHost) -> None:
        self._host = host
        self.partial_text = ""  # the answer streamed so far in the running request
        self.total_input_tokens = 0
        self.total_output_tokens = 0

    def new_turn(self) -> None:
        """Nothing an earlier turn streamed belongs to this one."""
        self.partial_text = ""

    async def run(self, system: str, sized: str, tools: list[dict[str, Any]]) -> LLMResponse:
        """Send one request and return its answer, added to the history. `sized` is the system prompt with the
        messages at the front of every request, as the request is sized."""
        host = self._host
        self.partial_text = ""
        await host.context.fit(host, sized, tools)
        response = await self._stream(system, sized, tools)
        if response is None:
            raise RuntimeError("The model's stream ended without a final response.")
        blocks: list[dict[str, Any]] = []
        if response.text:
            blocks.append({"type": "text", "text": response.text})
        for call in response.tool_calls:
            blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
        host.history.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
        host.conversation.save(durable=False)
        host.context.look_ahead(host, sized, tools)
        self.partial_text = ""
        if response.text:
            host.emit(AssistantMessageDone(response.text))
        self._count(response)
        return response

    async def _stream(self, system: str, sized: str, tools: list[dict[str, Any]]) -> LLMResponse | None:
        """One request, streamed; a "too long" refusal before any text makes room and sends it again."""
        from anton_tui.agent.context_window import request_chars
        from anton_tui.llm.errors import LLMError
        from anton_tui.llm.events import StreamComplete, TextDelta

        host = self._host
        attempt = 0
        while True:
            messages = [*host.turn_memory.front_messages, *host.history]
            host.context.sizer.sent(request_chars(system, tools, messages))
            response = None
            try:
                async for event in host.llm.plan_stream(system=system, messages=messages, tools=tools):
                    if isinstance(event, TextDelta):
                        self.partial_text += event.text
                        host.emit(AssistantTextDelta(event.text))
                    elif isinstance(event, StreamComplete):
                        response = event.response
                return response
            except LLMError as err:
                if err.kind != "context_too_long" or self.partial_text:
                    raise
                attempt += 1
                if not await host.context.recover(host, sized, tools, attempt, err):
                    raise

    def _count(self, response: LLMResponse) -> None:
        usage = response.usage
        self._host.context.sizer.observed(usage.input_tokens)
        self.total_input_tokens += usage.input_tokens
        self.total_output_tokens += usage.output_tokens
        self._host.emit(
            UsageUpdated(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_input_tokens=self.total_input_tokens,
                total_output_tokens=self.total_output_tokens,
            )
        )
