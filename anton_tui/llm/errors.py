"""The one error type the LLM layer raises, worded for the person at the keyboard.

Every failure (bad key, rate limit, dropped connection, a model that will not give structured
output) becomes an `LLMError` whose `str()` is a single line naming the provider, the model and
the cause, so the UI can show it as-is.
"""

from __future__ import annotations

KEY_VARIABLES = {
    "anthropic": "ANTON_ANTHROPIC_API_KEY",
    "openai": "ANTON_OPENAI_API_KEY",
    "openai-compatible": "ANTON_OPENAI_API_KEY",
}

RETRYABLE_KINDS = frozenset({"rate_limit", "overloaded", "server", "timeout", "connection"})


class LLMError(Exception):
    """A model call that failed. `kind` is one of: auth, permission, rate_limit, quota, overloaded,
    server, timeout, connection, bad_request, not_found, context_too_long, config,
    structured_output, unknown."""

    def __init__(
        self,
        provider: str,
        model: str,
        kind: str,
        message: str,
        *,
        partial_text: str = "",
        status_code: int | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.kind = kind
        self.message = " ".join(message.split())
        self.partial_text = partial_text
        self.status_code = status_code
        self.retry_after = retry_after
        self.retryable = kind in RETRYABLE_KINDS if retryable is None else retryable
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.provider} ({self.model}): {self.message}"

    def __reduce__(self) -> tuple:  # pickling and copying keep every field
        return (type(self), (self.provider, self.model, self.kind, self.message), dict(self.__dict__))


def key_hint(provider_name: str) -> str:
    variable = KEY_VARIABLES.get(provider_name, "ANTON_ANTHROPIC_API_KEY or ANTON_OPENAI_API_KEY")
    return f"Set {variable} (in the environment or in .anton/.env), or run /setup."


def short(text: str, limit: int = 200) -> str:
    """One line of at most `limit` characters, for quoting a server's own message."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
