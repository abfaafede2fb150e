"""Where settings come from, and what each one's raw text means: the process environment and the two .env files,
read and layered, and `setting_value`, the one function that turns a setting's raw text into its value.

This module reads; `anton_tui.config` validates what it read into a `Settings`, through `setting_value`. The split
lets the app paint its first frame from these raw layers (`FirstFrame`, through `setting_value` too) and validate
them right after, without loading pydantic first. The setup screen checks what the user chose with it as well
(`anton_tui.settings_form`).

Where a value comes from, highest priority first:

1. the process environment;
2. ``<project>/.anton/.env`` (the project's own file);
3. ``$ANTON_HOME/.env`` (the global file, ``~/.anton/.env`` unless ANTON_HOME says otherwise).

anton-agent reads the two files with the global one winning and later copies the project one into the process
environment, so which file wins depends on the moment you ask. Here the nearer scope always wins: project over
global, environment over both. ANTON_HOME is taken from the environment or the project file only (the global file
lives inside the home, so it cannot move it), and ANTON_PROJECT_DIR from the environment only.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeVar, get_args

SETTINGS_ERROR_EXIT = 2  # the exit code of a start stopped by a bad setting

ENVIRONMENT = "the environment"
COMMAND_LINE = "the command line"
DEFAULT = "default"

# Bare names the SDKs themselves use, accepted after the ANTON_ form of the same setting.
EXTRA_ENV_NAMES = {
    "anthropic_api_key": ("ANTHROPIC_API_KEY",),
    "openai_api_key": ("OPENAI_API_KEY",),
}


MemoryMode = Literal["autopilot", "copilot", "off"]
AccMode = Literal["off", "passive", "active"]
Provider = Literal["anthropic", "openai", "openai-compatible"]
ReviewLevel = Literal["ai", "human", "none"]

# Defaults of the settings the first frame and the setup screen show; `anton_tui.config.Settings` uses the same ones.
DEFAULT_THEME = "anton-dark"
DEFAULT_PROVIDER: Provider = "anthropic"
DEFAULT_PLANNING_MODEL = "claude-sonnet-4-6"
DEFAULT_CODING_MODEL = "claude-haiku-4-5-20251001"
DEFAULT_MEMORY_MODE: MemoryMode = "autopilot"


class SettingsError(Exception):
    """An invalid setting. ``str(err)`` is one line fit to show the user as is."""

    def __init__(self, variable: str, value: str, source: str, allowed: str) -> None:
        self.variable, self.value, self.source, self.allowed = variable, value, source, allowed
        super().__init__(f"{variable}={value} (from {source}) is not valid: expected {allowed}")


def absolute(path: str | os.PathLike[str]) -> Path:
    """`path` made absolute, a leading `~` taken as the home folder."""
    return Path(os.path.abspath(os.path.expanduser(path)))


class InvalidSetting(ValueError):
    """A raw value that is none of a setting's values; `allowed` says in words what they are."""

    def __init__(self, allowed: str) -> None:
        super().__init__(f"expected {allowed}")
        self.allowed = allowed


@dataclass(frozen=True)
class SettingKind:
    """How the raw text of one kind of setting becomes its value, and what its values are, in words."""

    allowed: str
    parse: Callable[[str], object]
    secret: bool = False  # a bad value is shown masked
    choices: tuple[str, ...] = ()  # every value, for a setting chosen from a fixed set


_TRUE_WORDS = frozenset({"1", "true", "yes", "on", "t", "y"})
_FALSE_WORDS = frozenset({"0", "false", "no", "off", "f", "n"})


def _yes_or_no(text: str) -> bool:
    word = text.strip().lower()
    if word in _TRUE_WORDS or word in _FALSE_WORDS:
        return word in _TRUE_WORDS
    raise ValueError(text)


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        number = float(text)  # `10.0` is ten; `10.5` and `inf` are not whole numbers
        if not number.is_integer():
            raise
        return int(number)


def _whole(*, least: int) -> SettingKind:
    def parse(text: str) -> int:
        number = _whole_number(text)
        if number < least:
            raise ValueError(text)
        return number

    return SettingKind(f"a whole number greater than {least - 1}" if least else "a whole number, 0 or more", parse)


def _share(text: str) -> float:
    number = float(text)
    if not 0 < number < 1:  # a NaN fails this too
        raise ValueError(text)
    return number


def _keymap(text: str) -> dict[str, str]:
    value = json.loads(text)
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(text)
    return value


def _one_of(choices: object) -> SettingKind:
    """A setting whose values are those of the `Literal` type `choices`."""
    values: tuple[str, ...] = get_args(choices)

    def parse(text: str) -> str:
        if text not in values:
            raise ValueError(text)
        return text

    return SettingKind("one of " + ", ".join(values), parse, choices=values)


_TEXT = SettingKind("text", str)
_SECRET = SettingKind("text", str, secret=True)
_FOLDER = SettingKind("a folder", absolute)
_YES_OR_NO = SettingKind("true or false", _yes_or_no)
_POSITIVE = _whole(least=1)
_SHARE = SettingKind("a number between 0 and 1, e.g. 0.7", _share)
_KEYMAP = SettingKind('a JSON object of binding id to keys, e.g. {"quit": "ctrl+q"}', _keymap)

SETTING_KINDS: dict[str, SettingKind] = {
    "home": _FOLDER,
    "project_dir": _FOLDER,
    "memory_mode": _one_of(MemoryMode),
    "memory_enabled": _YES_OR_NO,
    "trust_gate": _YES_OR_NO,
    "episodic_memory": _YES_OR_NO,
    "acc_mode": _one_of(AccMode),
    "compaction_every_turns": _POSITIVE,
    "memory_sync_minutes": _whole(least=0),
    "managed_memory": _TEXT,
    "identity_every_turns": _POSITIVE,
    "memory_budget_tokens": _POSITIVE,
    "planning_provider": _one_of(Provider),
    "planning_model": _TEXT,
    "coding_provider": _one_of(Provider),
    "coding_model": _TEXT,
    "max_tokens": _POSITIVE,
    "anthropic_api_key": _SECRET,
    "anthropic_base_url": _TEXT,
    "openai_api_key": _SECRET,
    "openai_base_url": _TEXT,
    "context_window": _POSITIVE,
    "context_pressure_threshold": _SHARE,
    "max_tool_rounds": _POSITIVE,
    "cell_timeout_default": _POSITIVE,
    "cell_inactivity_timeout": _POSITIVE,
    "cell_inactivity_after_progress": _POSITIVE,
    "cell_total_max": _POSITIVE,
    "cell_memory_limit_mb": _POSITIVE,
    "cell_keep_recent": _POSITIVE,
    "scratchpad_pass_api_keys": _YES_OR_NO,
    "skills_project_agents": _YES_OR_NO,
    "skills_user_agents": _YES_OR_NO,
    "skills_claude": _YES_OR_NO,
    "skills_builtin": _YES_OR_NO,
    "theme": _TEXT,
    "keymap": _KEYMAP,
    "notify_bell": _YES_OR_NO,
    "notify_desktop": _YES_OR_NO,
    "review_level": _one_of(ReviewLevel),
    "review_tainted": _one_of(ReviewLevel),
    "review_max_per_day": _whole(least=0),
    "reflection": _YES_OR_NO,
    "reflection_min_messages": _POSITIVE,
    "conversation_idle_minutes": _whole(least=0),
}
"""Every setting of `anton_tui.config.Settings` (by field name) and its kind."""


def setting_value(field_name: str, raw: str) -> object:
    """The value of setting `field_name` written as `raw` (in a .env file, the environment or the setup screen).

    Raises `InvalidSetting` saying what the setting's values are when `raw` is none of them. The first frame, the
    `Settings` model and the setup screen all turn text into a setting's value here."""
    kind = SETTING_KINDS[field_name]
    try:
        return kind.parse(raw)
    except ValueError:  # json.JSONDecodeError is one too
        raise InvalidSetting(kind.allowed) from None


def setting_choices(field_name: str) -> tuple[str, ...]:
    """The values of a setting that has a fixed set of them (the memory mode, a provider...), in order."""
    choices = SETTING_KINDS[field_name].choices
    if not choices:
        raise ValueError(f"{field_name} is not chosen from a fixed set of values")
    return choices


ModeT = TypeVar("ModeT", bound=str)


def effective_memory_mode(memory_mode: ModeT, memory_enabled: bool) -> ModeT | Literal["off"]:
    """The mode memory really runs in: ``off`` whenever ANTON_MEMORY_ENABLED is false, else the memory mode."""
    return memory_mode if memory_enabled else "off"


def env_names(field_name: str) -> tuple[str, ...]:
    """The variable names a field is read from, the preferred one first."""
    return (f"ANTON_{field_name.upper()}", *EXTRA_ENV_NAMES.get(field_name, ()))


@dataclass(frozen=True)
class EnvLayers:
    """The three sources of settings for one project, lowest priority first, as read at one moment."""

    project_dir: Path
    project_source: str
    layers: tuple[tuple[str, Mapping[str, str]], ...]  # (where from, its variables): global file, project file, env
    warnings: tuple[str, ...]  # one line per .env problem met while reading

    @property
    def home(self) -> Path:
        return Path(self.global_env).parent

    @property
    def global_env(self) -> str:
        return self.layers[0][0]

    def chosen(self, field_names: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """For each field that is set somewhere: (value, where from, variable name), the highest priority winning."""
        chosen: dict[str, tuple[str, str, str]] = {}
        for source, values in self.layers:
            for field_name in field_names:
                for name in reversed(env_names(field_name)):
                    if values.get(name):
                        chosen[field_name] = (values[name], source, name)
        chosen["project_dir"] = (str(self.project_dir), self.project_source, "ANTON_PROJECT_DIR")
        return chosen

    def without(self, variables: Iterable[str]) -> EnvLayers:
        """These layers with `variables` removed from every source (to get past a bad value and open the setup)."""
        drop = set(variables)
        layers = tuple((source, {k: v for k, v in values.items() if k not in drop}) for source, values in self.layers)
        return EnvLayers(self.project_dir, self.project_source, layers, self.warnings)


class ShownSettings(Protocol):
    """The settings the first frame and the header show: what `anton_tui.config.Settings` has for them."""

    @property
    def home(self) -> Path: ...
    @property
    def project_dir(self) -> Path: ...
    @property
    def theme(self) -> str: ...
    @property
    def planning_provider(self) -> str: ...
    @property
    def planning_model(self) -> str: ...
    @property
    def effective_memory_mode(self) -> str: ...
    @property
    def keymap(self) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class FirstFrame:
    """What the app's first frame shows, read from the raw layers without validating them: folders, theme, header
    labels and key map. A value that will not validate is shown as typed (a key map or a memory switch that will
    not, as its default); the `Runtime` then reports it."""

    home: Path
    project_dir: Path
    theme: str = DEFAULT_THEME
    planning_provider: str = DEFAULT_PROVIDER
    planning_model: str = DEFAULT_PLANNING_MODEL
    effective_memory_mode: str = DEFAULT_MEMORY_MODE
    keymap: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_layers(cls, layers: EnvLayers) -> FirstFrame:
        fields = ("theme", "planning_provider", "planning_model", "memory_mode", "memory_enabled", "keymap")
        chosen = {name: value for name, (value, _, _) in layers.chosen(fields).items()}

        def shown(field_name: str, default: object) -> object:
            raw = chosen.get(field_name)
            if raw is None:
                return default
            try:
                return setting_value(field_name, raw)
            except InvalidSetting:
                return raw if isinstance(default, str) else default

        memory_enabled = shown("memory_enabled", True)
        keymap = shown("keymap", {})
        return cls(
            home=layers.home,
            project_dir=layers.project_dir,
            theme=str(shown("theme", DEFAULT_THEME)),
            planning_provider=str(shown("planning_provider", DEFAULT_PROVIDER)),
            planning_model=str(shown("planning_model", DEFAULT_PLANNING_MODEL)),
            effective_memory_mode=effective_memory_mode(
                str(shown("memory_mode", DEFAULT_MEMORY_MODE)), memory_enabled is not False
            ),
            keymap=keymap if isinstance(keymap, dict) else {},
        )

    @classmethod
    def of(cls, settings: ShownSettings) -> FirstFrame:
        """The same view of validated settings."""
        return cls(
            home=Path(settings.home),
            project_dir=Path(settings.project_dir),
            theme=settings.theme or DEFAULT_THEME,
            planning_provider=settings.planning_provider,
            planning_model=settings.planning_model,
            effective_memory_mode=settings.effective_memory_mode,
            keymap=dict(settings.keymap),
        )


def read_env_layers(
    project_dir: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> EnvLayers:
    """Read the layers for ``project_dir`` (default: ANTON_PROJECT_DIR, else the current folder).

    ``environ`` stands in for the process environment (default ``os.environ``). Raises ``SettingsError`` when the
    project folder does not exist. Reading never changes a file.
    """
    environ = os.environ if environ is None else environ
    if project_dir is not None:
        project, project_source = absolute(project_dir), COMMAND_LINE
    elif environ.get("ANTON_PROJECT_DIR"):
        project, project_source = absolute(environ["ANTON_PROJECT_DIR"]), ENVIRONMENT
    else:
        project, project_source = Path.cwd(), DEFAULT
    if not project.is_dir():
        raise SettingsError("ANTON_PROJECT_DIR", repr(str(project)), project_source, "an existing folder")

    project_env = project / ".anton" / ".env"
    project_values, warnings = read_env_file(project_env)
    home_setting = environ.get("ANTON_HOME") or project_values.get("ANTON_HOME") or "~/.anton"
    global_env = absolute(home_setting) / ".env"
    global_values, global_warnings = read_env_file(global_env)
    global_values.pop("ANTON_HOME", None)
    for values in (global_values, project_values):
        values.pop("ANTON_PROJECT_DIR", None)
    return EnvLayers(
        project_dir=project,
        project_source=project_source,
        layers=((str(global_env), global_values), (str(project_env), project_values), (ENVIRONMENT, dict(environ))),
        warnings=(*warnings, *global_warnings),
    )


def read_env_file(path: Path) -> tuple[dict[str, str], list[str]]:
    """The ``KEY=value`` pairs of one .env file and a one-line warning for each line that could not be read.

    A missing file gives nothing. The file is never modified.
    """
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}, []
    except UnicodeDecodeError:
        return {}, [f"{path}: not UTF-8 text, so none of its settings were used (the file was left as it is)"]
    except OSError as exc:
        return {}, [f"{path}: cannot be read ({exc.strerror}), so none of its settings were used"]

    from dotenv.parser import parse_stream  # (python-dotenv's package brings tempfile and shutil: only for a file)

    values: dict[str, str] = {}
    warnings: list[str] = []
    for binding in parse_stream(io.StringIO(text, newline="")):
        if binding.error:
            line_no, body = _locate(binding.original.string, binding.original.line)
            warnings.append(f"{path}, line {line_no}: not a KEY=value line, ignored (starts {_line_head(body)})")
        elif binding.key is not None and binding.value is not None:
            values[binding.key] = binding.value
    return values, warnings


def _locate(original: str, first_line: int) -> tuple[int, str]:
    """The real line number and text of a parser chunk, which starts with any blank lines before it."""
    lead, body, _ = split_chunk(original)
    return first_line + len(re.findall(r"\r\n|\n|\r", lead)), body


def _line_head(body: str) -> str:
    """The start of a bad line, cut before any value so a key is never echoed."""
    text = body.strip()
    cut = text.find("=")
    return repr(text[: cut + 1] + "..." if cut >= 0 else text[:30] + ("..." if len(text) > 30 else ""))


def split_chunk(chunk: str) -> tuple[str, str, str]:
    """Split a parser chunk into (blank lines before, the statement, its line ending)."""
    leading = chunk[: len(chunk) - len(chunk.lstrip())]
    cut = max(leading.rfind("\n"), leading.rfind("\r")) + 1
    body = chunk[cut:]
    ending = "\r\n" if body.endswith("\r\n") else body[-1:] if body.endswith(("\n", "\r")) else ""
    return chunk[:cut], body[: len(body) - len(ending)], ending
