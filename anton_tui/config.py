"""Settings: every ANTON_ option as one typed object, validated from the environment and the two .env files.

`anton_tui.settings_sources` reads and layers the sources (and says which wins), and its `setting_value` turns each
raw value into the setting's value; this module gathers those into a `Settings`, a plain pydantic model: the layering
is done before it, so pydantic-settings would add only its imports (6 MB and 70 ms). Reading never changes a file. A
line the .env parser cannot read is skipped and reported in ``Settings.env_warnings``; an invalid value raises
``SettingsError`` naming the variable and where it came from. ``write_project_env`` is the only writer and touches
nothing but the keys it is given.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any, Literal

from dotenv.parser import parse_stream
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from anton_tui.memory.files.locking import atomic_write, folder_lock
from anton_tui.paths import ENV_FILE_HEADER
from anton_tui.settings_sources import (
    COMMAND_LINE,
    DEFAULT,
    DEFAULT_CODING_MODEL,
    DEFAULT_MEMORY_MODE,
    DEFAULT_PLANNING_MODEL,
    DEFAULT_PROVIDER,
    DEFAULT_THEME,
    ENVIRONMENT,
    SETTING_KINDS,
    AccMode,
    EnvLayers,
    MemoryMode,
    Provider,
    ReviewLevel,
    SettingsError,
    effective_memory_mode,
    env_names,
    read_env_file,
    read_env_layers,
    setting_value,
    split_chunk,
)

__all__ = [
    "COMMAND_LINE",
    "DEFAULT",
    "ENVIRONMENT",
    "AccMode",
    "MemoryMode",
    "Provider",
    "Settings",
    "SettingsError",
    "env_names",
    "load_settings",
    "read_env_file",
    "settings_from_layers",
    "write_project_env",
]


class Settings(BaseModel):
    """All options. Build it with ``load_settings()``; ``Settings()`` alone holds the defaults.

    Each raw value (text, or a folder's path) becomes the setting's value through `setting_value`, which also holds
    each setting's limits; the annotations here give the types those values have."""

    model_config = ConfigDict(extra="ignore", validate_default=True)  # a default goes through `setting_value` too

    home: Path = Path("~/.anton")
    project_dir: Path = Field(default_factory=Path.cwd)

    memory_mode: MemoryMode = DEFAULT_MEMORY_MODE
    memory_enabled: bool = True
    trust_gate: bool = True  # hold memories learned after outside content (and instruction-like ones) for review
    episodic_memory: bool = True
    acc_mode: AccMode = "passive"
    compaction_every_turns: int = 10
    memory_sync_minutes: int = 0  # sync shared memory every N minutes (0: only by hand)
    managed_memory: str | None = None  # read-only managed memory folder ("off": none; unset: /etc/anton/memory if any)
    identity_every_turns: int = 5
    memory_budget_tokens: int = 2000  # learned rules and lessons ranked into a prompt (pinned ones beside it)

    planning_provider: Provider = DEFAULT_PROVIDER
    planning_model: str = DEFAULT_PLANNING_MODEL
    coding_provider: Provider = "anthropic"
    coding_model: str = DEFAULT_CODING_MODEL
    max_tokens: int = 8192
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None

    context_window: int | None = None  # tokens; overrides the table of known models
    context_pressure_threshold: float = 0.7  # share of the window a request may fill

    max_tool_rounds: int = 25
    cell_timeout_default: int = 120
    cell_inactivity_timeout: int = 30
    cell_inactivity_after_progress: int = 60
    cell_total_max: int = 3600
    cell_memory_limit_mb: int = 2048
    cell_keep_recent: int = 5
    scratchpad_pass_api_keys: bool = False

    # read-only skill sources besides ~/.anton/skills (see memory/skills/sources.py); each can be switched off
    skills_project_agents: bool = True  # <project>/.agents/skills
    skills_user_agents: bool = True  # ~/.agents/skills
    skills_claude: bool = True  # ~/.claude/skills
    skills_builtin: bool = True  # the skills shipped with anton-tui

    theme: str = DEFAULT_THEME
    keymap: dict[str, str] = Field(default_factory=dict)
    notify_bell: bool = True  # ring the terminal bell when a turn ends, a question waits or an error comes, unfocused
    notify_desktop: bool = True  # and send a desktop notification (OSC 9 / OSC 777) then

    # the review every self-change takes (memory/review/), and reflection (memory/reflection/)
    review_level: ReviewLevel = "ai"  # who decides a proposed change: the AI reviewer, a person, or no one
    review_tainted: ReviewLevel = "human"  # the same, for a change made from untrusted input
    review_max_per_day: int = 10  # changes applied without a person per day; past it they wait for one
    reflection: bool = True  # write the due daily, weekly and monthly reflections at start and when idle
    reflection_min_messages: int = 3  # a period with fewer user messages is quiet: a one-line note, no model call
    conversation_idle_minutes: int = 30  # idle this long, a conversation is summarised (0: only when it ends)

    _env_warnings: list[str] = PrivateAttr(default_factory=list)
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)
    _variables: dict[str, str] = PrivateAttr(default_factory=dict)

    @field_validator("*", mode="before")
    @classmethod
    def _from_raw(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str | PurePath) and info.field_name is not None:
            return setting_value(info.field_name, str(value))
        return value

    @property
    def effective_memory_mode(self) -> MemoryMode:
        """The mode memory really runs in: ``off`` whenever ANTON_MEMORY_ENABLED is false."""
        return effective_memory_mode(self.memory_mode, self.memory_enabled)

    @property
    def env_warnings(self) -> list[str]:
        """One line per .env problem found while loading (unreadable lines or files); the files were left as they are."""
        return list(self._env_warnings)

    def source_of(self, field_name: str) -> str:
        """Where a field's value came from: a .env path, ``the environment``, ``the command line`` or ``default``."""
        return self._sources.get(field_name, DEFAULT)

    def variable_of(self, field_name: str) -> str:
        """The variable a field's value was read from (``ANTHROPIC_API_KEY`` or ``ANTON_ANTHROPIC_API_KEY``...); for a
        default, the variable that would set it."""
        return self._variables.get(field_name) or env_names(field_name)[0]

    def has_api_key(self, role: Literal["planning", "coding"] = "planning") -> bool:
        """Whether the provider for ``role`` can be called: it has a key, or is an OpenAI-compatible server with a URL."""
        provider = self.planning_provider if role == "planning" else self.coding_provider
        if provider == "openai-compatible" and self.openai_base_url:
            return True
        return self.has_key(provider)

    def has_key(self, provider: str) -> bool:
        """Whether a key for ``provider`` is set (an OpenAI-compatible server uses the OpenAI key)."""
        return _present(self.anthropic_api_key if provider == "anthropic" else self.openai_api_key)

    def needs_setup(self) -> bool:
        """True when the planning or the coding model has no way to be called (no key, no compatible server URL)."""
        return not (self.has_api_key("planning") and self.has_api_key("coding"))


def _present(secret: SecretStr | None) -> bool:
    return secret is not None and bool(secret.get_secret_value().strip())


def load_settings(
    project_dir: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Read and validate the settings for ``project_dir`` (default: ANTON_PROJECT_DIR, else the current folder).

    ``environ`` stands in for the process environment (default ``os.environ``). Raises ``SettingsError``.
    """
    return settings_from_layers(read_env_layers(project_dir, environ))


def settings_from_layers(layers: EnvLayers) -> Settings:
    """Validate what `read_env_layers` read. Raises ``SettingsError`` naming the first bad variable and its source."""
    chosen = layers.chosen(Settings.model_fields)
    raw = {field_name: value for field_name, (value, _, _) in chosen.items()}
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        raise _settings_error(exc, chosen) from None
    settings._env_warnings = list(layers.warnings)
    settings._sources = {field_name: source for field_name, (_, source, _) in chosen.items()}
    settings._variables = {field_name: variable for field_name, (_, _, variable) in chosen.items()}
    return settings


def _settings_error(exc: ValidationError, chosen: dict[str, tuple[str, str, str]]) -> SettingsError:
    error = exc.errors()[0]
    field_name = str(error["loc"][0]) if error["loc"] else ""
    value, source, variable = chosen.get(field_name, (str(error.get("input")), DEFAULT, env_names(field_name)[0]))
    kind = SETTING_KINDS.get(field_name)
    allowed = kind.allowed if kind is not None else "a valid value"
    return SettingsError(
        variable, _masked(value) if kind is not None and kind.secret else _shown(value), source, allowed
    )


def _shown(value: str) -> str:
    return repr(value if len(value) <= 80 else f"{value[:50]}...{value[-27:]}")


def _masked(value: str) -> str:
    return "'****'" if len(value) < 12 else repr(f"{value[:4]}...{value[-2:]}")


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BARE_VALUE = re.compile(r"[A-Za-z0-9_\-.,:/@+=%^~]*\Z")


def write_project_env(project_dir: str | os.PathLike[str], updates: Mapping[str, str | None]) -> Path:
    """Set (or, with ``None``, remove) keys in ``<project>/.anton/.env``; every other line stays byte for byte.

    Creates the file (mode 0600) and its folder when missing. A value holding a line break, or a file that is not
    UTF-8 text (the reader would ignore it, and the value with it), raises ``ValueError`` before anything is
    written. Returns the file's path.
    """
    for key, value in updates.items():
        if not _KEY.match(key):
            raise ValueError(f"{key!r} is not a valid variable name")
        if value is not None and ("\n" in value or "\r" in value):
            raise ValueError(f"{key}: the value contains a line break; .env values must fit on one line")

    path = Path(project_dir) / ".anton" / ".env"
    path.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(path.parent):
        try:
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            text = ENV_FILE_HEADER
        except UnicodeDecodeError as exc:
            # The reader ignores such a file entirely, so a value written into it would never take effect.
            raise ValueError(
                f"{path} is not UTF-8 text (byte {exc.start}), so none of its settings can be read; nothing was "
                f"written. Save the file as UTF-8 (or remove it) and try again."
            ) from None
        atomic_write(path, _apply_updates(text, updates).encode("utf-8"), mode=0o600)
    return path


def _apply_updates(text: str, updates: Mapping[str, str | None]) -> str:
    parts = ["\ufeff"] if text.startswith("\ufeff") else []
    written: set[str] = set()
    for binding in parse_stream(io.StringIO(text, newline="")):
        chunk, key = binding.original.string, binding.key
        if binding.error or key is None or key not in updates:
            parts.append(chunk)
            continue
        lead, _, ending = split_chunk(chunk)
        value = updates[key]
        if value is None or key in written:
            parts.append(lead)
        else:
            parts.append(f"{lead}{key}={_quoted(value)}{ending}")
            written.add(key)
    result = "".join(parts)
    for key, value in updates.items():
        if value is not None and key not in written:
            if result and not result.endswith(("\n", "\r")):
                result += "\n"
            result += f"{key}={_quoted(value)}\n"
    return result


def _quoted(value: str) -> str:
    if _BARE_VALUE.match(value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
