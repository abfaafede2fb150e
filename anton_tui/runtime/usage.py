"""The Runtime's running account of the conversation's usage, for the status line: tokens in and out, an estimated
cost at list prices (known models only), and how full the model's context window was at the last request.

`Runtime.note_usage(event)` takes each `UsageUpdated` the session emits (one per model request) and returns the
figures to show. Each request is priced with the planning model in use when it was answered
(`llm/pricing.py`); the cost is shown only while the current model has a price, and counts the requests that had
one. The context used is the last request's input tokens against the window the session sizes requests by
(`agent/context_window.py`, or `ANTON_CONTEXT_WINDOW`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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


class UsageOps:
    """Usage figures of the `Runtime` (over its `session` and `settings`)."""

    session: Any
    settings: Any
    _priced_usd: float = 0.0

    @property
    def answering_model(self) -> str:
        role = getattr(getattr(self.session, "llm", None), "planning", None)
        return str(getattr(role, "model", None) or getattr(self.settings, "planning_model", ""))

    def model_window(self) -> int:
        """Tokens the planning model takes in one request, as the session sizes requests by."""
        keeper, llm = getattr(self.session, "context", None), getattr(self.session, "llm", None)
        window = getattr(keeper, "window", None)
        if callable(window) and llm is not None:
            return int(window(llm))
        from anton_tui.agent.context_window import context_window

        return context_window(self.answering_model, getattr(self.settings, "context_window", None))

    def note_usage(self, event: Any) -> UsageFigures:
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
