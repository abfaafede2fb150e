"""How much a model can read at once, and how big a request is: the numbers behind summarising long histories.

`context_window(model)` looks the model up in a table of known models (first matching prefix wins, most specific
first; the figures are Anton's). A model not in the table gets `UNKNOWN_WINDOW`, deliberately small: a local or new
model with a small window then has its history summarised early instead of failing. `ANTON_CONTEXT_WINDOW` overrides
the table for the planning model.

`RequestSizer` estimates a request's size in tokens from its characters without a tokenizer: it starts from a
conservative characters-per-token figure and then learns the real ratio from the token counts the provider reports.
"""

from __future__ import annotations

import json
from typing import Any

KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude-sonnet-4-6", 200_000),
    ("claude-haiku-4-5-20251001", 200_000),
    ("claude-opus-4", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-haiku-4", 200_000),
    ("claude-3", 200_000),
    ("claude-", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_000_000),
    ("gpt-4o", 128_000),
    ("gpt-4", 128_000),
    ("gpt-3.5-turbo", 16_385),
    ("o4", 200_000),
    ("o3", 200_000),
    ("o1", 200_000),
)
UNKNOWN_WINDOW = 32_768
DEFAULT_PRESSURE_SHARE = 0.7

CHARS_PER_TOKEN_GUESS = 3.0  # before the provider has told us: a little pessimistic for English and code
RATIO_BOUNDS = (1.2, 6.0)  # characters per token we are prepared to believe


def known_window(model: str) -> int | None:
    """The table's figure for `model`, or None when no entry matches."""
    name = (model or "").strip().lower()
    for prefix, size in KNOWN_WINDOWS:
        if name.startswith(prefix):
            return size
    return None


def context_window(model: str, override: int | None = None) -> int:
    """Tokens `model` can take in one request: `override` when set, else the table, else `UNKNOWN_WINDOW`."""
    if override:
        return int(override)
    return known_window(model) or UNKNOWN_WINDOW


def request_chars(system: str, tools: list[dict[str, Any]] | None, messages: list[dict[str, Any]]) -> int:
    """Characters of what a request carries (system prompt, tool definitions, messages), as JSON text."""
    size = len(system or "")
    if tools:
        size += len(json.dumps(tools, ensure_ascii=False))
    return size + messages_chars(messages)


def messages_chars(messages: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages, ensure_ascii=False, default=str))


def message_chars(message: dict[str, Any]) -> int:
    return len(json.dumps(message, ensure_ascii=False, default=str))


class RequestSizer:
    """Turns characters into estimated tokens, learning the ratio from what the provider reports."""

    def __init__(self) -> None:
        self.chars_per_token = CHARS_PER_TOKEN_GUESS
        self._sent_chars = 0

    def tokens(self, chars: int) -> int:
        return int(chars / self.chars_per_token) + 1

    def sent(self, chars: int) -> None:
        """Remember the size of the request just sent, to compare with the usage its answer reports."""
        self._sent_chars = chars

    def observed(self, input_tokens: int) -> None:
        """The provider counted `input_tokens` for the last request sent: adopt that ratio (within bounds)."""
        if input_tokens <= 0 or self._sent_chars <= 0:
            return
        low, high = RATIO_BOUNDS
        self.chars_per_token = min(high, max(low, self._sent_chars / input_tokens))
        self._sent_chars = 0
