"""The setup screen's rules: which settings it edits, how what the user entered is checked, and the `.env` lines it
becomes (Anton's variable names, from `env_names`); and, for each setting, where the value in use comes from.

The screen gathers a `SetupValues` from its fields, and `setup_updates` checks it and turns it into updates for
`write_project_env` (the Runtime's `save_settings` writes them). A value is refused with a `SetupError` naming the
entry at fault; the choices (provider, memory mode, self-check) are checked by `setting_value`, as a `.env` file's
are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast
from urllib.parse import urlparse

from anton_tui.settings_sources import (
    COMMAND_LINE,
    DEFAULT,
    DEFAULT_CODING_MODEL,
    DEFAULT_PLANNING_MODEL,
    ENVIRONMENT,
    InvalidSetting,
    Provider,
    env_names,
    setting_value,
)

if TYPE_CHECKING:
    from anton_tui.config import Settings

PROVIDER_TITLES: dict[str, str] = {
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "openai-compatible": "OpenAI-compatible server",
}
KEY_PREFIX: dict[Provider, str] = {"anthropic": "sk-ant-", "openai": "sk-"}
_KEY_CHARACTERS = re.compile(r"[A-Za-z0-9_\-]")
SUGGESTED_MODELS: dict[str, tuple[str, str]] = {"anthropic": (DEFAULT_PLANNING_MODEL, DEFAULT_CODING_MODEL)}
"""(planning, coding) models the form suggests when a provider is chosen."""

EDITED = (
    "planning_provider",
    "planning_model",
    "coding_provider",
    "coding_model",
    "openai_base_url",
    "memory_mode",
    "episodic_memory",
    "acc_mode",
    "anthropic_api_key",
    "openai_api_key",
    "review_level",
    "review_tainted",
    "review_max_per_day",
    "reflection",
    "reflection_min_messages",
    "conversation_idle_minutes",
)
"""The settings the setup screen writes (by field name)."""


class SetupError(ValueError):
    """A value the user entered cannot be saved; `entry` names the `SetupValues` field at fault."""

    def __init__(self, message: str, entry: str) -> None:
        super().__init__(message)
        self.entry = entry


@dataclass(frozen=True)
class SetupValues:
    """What the user entered in the setup screen, as entered."""

    provider: str
    api_key: str
    base_url: str
    planning_model: str
    coding_model: str
    memory_mode: str
    episodic_memory: bool
    acc_mode: str
    review_level: str = "ai"
    review_tainted: str = "human"
    review_max_per_day: str = "10"
    reflection: bool = True
    reflection_min_messages: str = "3"
    conversation_idle_minutes: str = "30"


def key_field(provider: str) -> str:
    """The setting that holds the key of `provider` (an OpenAI-compatible server uses the OpenAI one)."""
    return "anthropic_api_key" if provider == "anthropic" else "openai_api_key"


def variable(field_name: str) -> str:
    """The variable the setup screen writes a setting to."""
    return env_names(field_name)[0]


def setup_updates(values: SetupValues, settings: Settings) -> dict[str, str | None]:
    """The `.env` lines to write for `values` (None removes a line). Raises SetupError before anything is written."""
    provider = _provider(values.provider)
    updates: dict[str, str | None] = {
        variable("planning_provider"): provider,
        variable("planning_model"): _model(values.planning_model, "Planning model", "planning_model"),
        variable("coding_provider"): provider,
        variable("coding_model"): _model(values.coding_model, "Coding model", "coding_model"),
    }
    key = _one_line(values.api_key, "The API key", "api_key")
    if any(ch.isspace() for ch in key):
        raise SetupError("The API key has a space in it; paste just the key.", "api_key")
    if key:
        _check_key_shape(provider, key)
        updates[variable(key_field(provider))] = key
    elif provider != "openai-compatible" and not settings.has_key(provider):
        raise SetupError(f"Enter your {PROVIDER_TITLES[provider]} API key (or try the demo).", "api_key")
    base_url = _one_line(values.base_url, "The base URL", "base_url")
    if provider == "openai-compatible":
        parsed = urlparse(base_url)
        if not base_url:
            example = "http://localhost:11434/v1"
            raise SetupError(f"An OpenAI-compatible server needs its base URL (e.g. {example}).", "base_url")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise SetupError(f"The base URL must start with http:// or https:// ({base_url!r}).", "base_url")
        updates[variable("openai_base_url")] = base_url
    elif provider == "openai":
        updates[variable("openai_base_url")] = None  # the official API: drop a compatible server's URL from here
    updates[variable("memory_mode")] = _chosen("memory_mode", values.memory_mode, "Choose a memory mode.")
    updates[variable("episodic_memory")] = "true" if values.episodic_memory else "false"
    updates[variable("acc_mode")] = _chosen("acc_mode", values.acc_mode, "Choose a self-check (ACC) mode.")
    updates[variable("review_level")] = _chosen("review_level", values.review_level, "Choose who reviews changes.")
    updates[variable("review_tainted")] = _chosen(
        "review_tainted", values.review_tainted, "Choose who reviews changes made from untrusted input."
    )
    updates[variable("reflection")] = "true" if values.reflection else "false"
    for field_name, typed, what in (
        ("review_max_per_day", values.review_max_per_day, "Changes per day"),
        ("reflection_min_messages", values.reflection_min_messages, "Reflection threshold"),
        ("conversation_idle_minutes", values.conversation_idle_minutes, "Idle minutes"),
    ):
        updates[variable(field_name)] = _number(field_name, typed, what)
    return updates


def _number(field_name: str, value: str, what: str) -> str:
    """A whole number the setting accepts, as typed (stripped), else a SetupError saying what it must be."""
    text = value.strip()
    try:
        setting_value(field_name, text)
    except InvalidSetting as exc:
        raise SetupError(f"{what}: {exc} ({text!r}).", field_name) from None
    return text


def _chosen(field_name: str, value: str, refusal: str, *, entry: str | None = None) -> str:
    """`value` when it is one of the setting's choices, else a SetupError for `entry` (by default the setting)."""
    try:
        setting_value(field_name, value)
    except InvalidSetting:
        raise SetupError(refusal, entry or field_name) from None
    return value


def _provider(value: str) -> Provider:
    _chosen("planning_provider", value, "Choose a provider.", entry="provider")
    return cast("Provider", value)


def _one_line(value: str, what: str, entry: str) -> str:
    if "\n" in value or "\r" in value:
        raise SetupError(f"{what} must be on one line.", entry)
    return value.strip()


def _model(value: str, what: str, entry: str) -> str:
    name = _one_line(value, what, entry)
    if not name:
        raise SetupError(f"{what}: enter a model name.", entry)
    if any(ch.isspace() for ch in name):
        raise SetupError(f"{what}: a model name has no spaces ({name!r}).", entry)
    return name


def _check_key_shape(provider: Provider, key: str) -> None:
    """Refuse a key that cannot be the provider's, saying what looks wrong (a compatible server takes any key)."""
    prefix = KEY_PREFIX.get(provider)
    if prefix is None:
        return
    name = PROVIDER_TITLES[provider]
    if provider == "anthropic" and key.startswith("sk-") and not key.startswith(prefix):
        raise SetupError("That looks like an OpenAI key; Anthropic keys start with sk-ant-.", "api_key")
    if provider == "openai" and key.startswith(KEY_PREFIX["anthropic"]):
        raise SetupError(
            "That looks like an Anthropic key; choose Anthropic as the provider, or paste an OpenAI key (they start "
            "with sk-).",
            "api_key",
        )
    if not key.startswith(prefix):
        raise SetupError(
            f"That is not an {name} API key: {name} keys start with {prefix} (this one starts with "
            f"{key[: len(prefix)]!r}).",
            "api_key",
        )
    odd = next((ch for ch in key if not _KEY_CHARACTERS.fullmatch(ch)), None)
    if odd is not None:
        raise SetupError(f"An {name} key has only letters, digits, - and _; this one has {odd!r}.", "api_key")


def overridden(updates: dict[str, str | None], settings: Settings) -> list[str]:
    """The environment variables that win over values just written (so the saved value is not the one in use)."""
    return [
        settings.variable_of(field_name)
        for field_name in EDITED
        if variable(field_name) in updates and settings.source_of(field_name) == ENVIRONMENT
    ]


def environment_overrides(settings: Settings) -> list[str]:
    """Every variable of the setup screen whose value in use comes from the environment rather than a .env file."""
    return [settings.variable_of(name) for name in EDITED if settings.source_of(name) == ENVIRONMENT]


def key_in_environment(settings: Settings, provider: str) -> str | None:
    """The variable of the environment the key of `provider` in use comes from, if it comes from there."""
    field_name = key_field(provider)
    if settings.has_key(provider) and settings.source_of(field_name) == ENVIRONMENT:
        return settings.variable_of(field_name)
    return None


def source_note(settings: Settings, field_name: str) -> str:
    """Where the value in use of a setting comes from, in words, and whether a value saved here would be used."""
    source = settings.source_of(field_name)
    if source == ENVIRONMENT:
        return (
            f"in effect: {settings.variable_of(field_name)} from the environment; a value saved here is not used "
            "while it is set"
        )
    if source == COMMAND_LINE:
        return "in effect: the command line (for this run only)"
    if source == DEFAULT:
        return "in effect: the default (nothing sets it)"
    if source == str(settings.project_dir / ".anton" / ".env"):
        return "in effect: .anton/.env of this project"
    if source == str(settings.home / ".env"):
        return "in effect: the global .env (all projects); saving here writes this project's, which wins"
    return f"in effect: {source}"
