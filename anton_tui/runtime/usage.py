"""The running account of the conversation's usage, for the status line: tokens in and out, an estimated cost at
list prices (known models only), and how full the model's context window was at the last request.

`Usage.note(event)` takes each `UsageUpdated` the session emits (one per model request) and returns the figures to
show. Each request is priced with the planning model in use when it was answered (`llm/pricing.py`); the cost is
shown only while the current model has a price, and counts the requests that had one. The context used is the last
request's input tokens against the window the session sizes requests by (`agent/context_window.py`, or
`ANTON_CONTEXT_WINDOW`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anton_tui.runtime.protocols import ModelAccess, ModelSettings

if TYPE_CHECKING:
    from anton_tui.agent.events import UsageUpdated


@dataclass(frozen=True)
class UsageFigures:
    input_tokens: int  # the conversation so far
    output_tokens: int
    cost_usd: float | None  # None: the current model has no price
    context_tokens: int  # input tokens of the last request
    context_window: int  # tokens the model takes in one request

    @property
    def cost_label(self) -> str:
        """`~$0.12`, or nothing for a model without a price."""
        if self.cost_usd is None:
            return ""
        from anton_tui.llm.pricing import format_usd

        return f"~{format_usd(self.cost_usd)}"


class Usage:
    """Tokens and cost of one conversation, over the session's model (or the settings' when it has none)."""

    def __init__(self, session: ModelAccess, settings: Callable[[], ModelSettings]) -> None:
        self._session = session
        self._settings = settings
        self._priced_usd = 0.0

    @property
    def provider_label(self) -> str:
        """What the header calls the planning provider: the session's own name for it when it has one."""
        llm = self._session.llm
        return llm.planning.provider.name if llm is not None else self._settings().planning_provider

    @property
    def answering_model(self) -> str:
        llm = self._session.llm
        return llm.planning.model if llm is not None else self._settings().planning_model

    def model_window(self) -> int:
        """Tokens the planning model takes in one request, as the session sizes requests by."""
        llm = self._session.llm
        if llm is not None:
            return self._session.context.window(llm)
        from anton_tui.agent.context_window import context_window

        return context_window(self.answering_model, self._settings().context_window)

    def note(self, event: UsageUpdated) -> UsageFigures:
        """Count one `UsageUpdated` and give the figures the status line shows after it."""
        from anton_tui.llm.pricing import cost_usd, price_of

        model = self.answering_model
        cost = cost_usd(model, event.input_tokens, event.output_tokens)
        if cost is not None:
            self._priced_usd += cost
        return UsageFigures(
            input_tokens=event.total_input_tokens,
            output_tokens=event.total_output_tokens,
            cost_usd=self._priced_usd if price_of(model) is not None else None,
            context_tokens=event.input_tokens,
            context_window=self.model_window(),
        )
