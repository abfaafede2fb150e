"""What a request costs at the providers' list prices: a small table of known models, in US dollars per million
input and output tokens, for the estimate the status line shows.

Prices as of 2026-11-25 (Anthropic's model pages for Claude; OpenAI's price list as published in June 2026 for the
GPT-5.4/5.5 family and earlier for the older models). They are list prices for standard requests: prompt caching,
batch discounts, long-context surcharges and tool fees are not counted, so the figure is an estimate. A model is
priced only when its name is in the table, exactly or with a dated snapshot suffix (`claude-haiku-4-5-20251001`,
`gpt-4o-2024-08-06`); any other model (a local or OpenAI-compatible server, a model newer than the table) has no
price, and no cost is shown rather than a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRICES_AS_OF = "2026-11-25"


@dataclass(frozen=True, slots=True)
class Price:
    input_per_million: float  # USD per 1,000,000 input tokens
    output_per_million: float  # USD per 1,000,000 output tokens

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1_000_000


PRICES: dict[str, Price] = {
    # Anthropic
    "claude-opus-5-5": Price(4.0, 20.0),
    "claude-opus-5": Price(5.0, 25.0),
    "claude-sonnet-5-5": Price(2.0, 10.0),
    "claude-sonnet-5": Price(2.0, 10.0),
    "claude-opus-4-6": Price(5.0, 25.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-opus-4": Price(15.0, 75.0),
    "claude-sonnet-4-6": Price(3.0, 15.0),
    "claude-sonnet-4-5": Price(3.0, 15.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-haiku-4-5": Price(1.0, 5.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25),
    # OpenAI
    "gpt-5.5": Price(5.0, 30.0),
    "gpt-5.5-pro": Price(30.0, 180.0),
    "gpt-5.4": Price(2.5, 15.0),
    "gpt-5.4-pro": Price(30.0, 180.0),
    "gpt-5.4-mini": Price(0.75, 4.5),
    "gpt-5.4-nano": Price(0.2, 1.25),
    "gpt-5.2": Price(1.75, 14.0),
    "gpt-5.1": Price(1.25, 10.0),
    "gpt-5": Price(1.25, 10.0),
    "gpt-5-mini": Price(0.25, 2.0),
    "gpt-5-nano": Price(0.05, 0.4),
    "gpt-4.1": Price(2.0, 8.0),
    "gpt-4.1-mini": Price(0.4, 1.6),
    "gpt-4.1-nano": Price(0.1, 0.4),
    "gpt-4o": Price(2.5, 10.0),
    "gpt-4o-mini": Price(0.15, 0.6),
    "o3": Price(2.0, 8.0),
    "o4-mini": Price(1.1, 4.4),
}

_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)")
"""What may follow a table name and still be the same model: a dated snapshot or the `-latest` alias."""


def price_of(model: str) -> Price | None:
    """The list price of `model`, or None when it is not in the table."""
    name = (model or "").strip().lower()
    if name in PRICES:
        return PRICES[name]
    for known, price in PRICES.items():
        if name.startswith(known) and _SNAPSHOT.fullmatch(name[len(known) :]):
            return price
    return None


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """What one request of `model` cost at list price; None for a model without a price."""
    price = price_of(model)
    return None if price is None else price.cost(input_tokens, output_tokens)


def format_usd(amount: float) -> str:
    """`$0.004`, `$0.12`, `$3.40`, `$1,204`: enough digits to see small amounts move."""
    if amount < 0.01:
        return f"${amount:.3f}"
    if amount < 1_000:
        return f"${amount:,.2f}"
    return f"${amount:,.0f}"
