"""Where settings come from: the process environment and the two .env files, read and layered but not validated.

This module reads; `anton_tui.config` validates what it read into a `Settings`. The split lets the app paint its
first frame from these raw layers (`FirstFrame`) and validate them right after, without loading pydantic first.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dotenv.parser import parse_stream

SETTINGS_ERROR_EXIT = 2  # the exit code of a start stopped by a bad setting

ENVIRONMENT = "the environment"
COMMAND_LINE = "the command line"
DEFAULT = "default"

# Bare names the SDKs themselves use, accepted after the ANTON_ form of the same setting.
EXTRA_ENV_NAMES = {
    "anthropic_api_key": ("ANTHROPIC_API_KEY",),
    "openai_api_key": ("OPENAI_API_KEY",),
}


# Defaults of the settings the first frame shows; `anton_tui.config.Settings` uses the same ones.
DEFAULT_THEME = "anton-dark"
DEFAULT_PROVIDER = "anthropic"
DEFAULT_PLANNING_MODEL = "claude-sonnet-4-6"
DEFAULT_MEMORY_MODE = "autopilot"
FALSE_WORDS = frozenset({"0", "false", "no", "off", "f", "n"})


class SettingsError(Exception):
    """An invalid setting. ``str(err)`` is one line fit to show the user as is."""

    def __init__(self, variable: str, value: str, source: str, allowed: str) -> None:
        self.variable, self.value, self.source, self.allowed = variable, value, source, allowed
        super().__init__(f"{variable}={value} (from {source}) is not valid: expected {allowed}")


def env_names(field_name: str) -> tuple[str, ...]:
    """The variable names a field is read from, the preferred one first."""
    return (f"ANTON_{field_name.upper()}", *EXTRA_ENV_NAMES.get(field_name, ()))


def absolute(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(os.path.expanduser(path)))


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


@dataclass(frozen=True)
class FirstFrame:
    """What the app's first frame shows, read from the raw layers without validating them: folders, theme, header
    labels and key map. A value that will not validate is shown as typed; the `Runtime` then reports it."""

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
        memory_off = chosen.get("memory_enabled", "").strip().lower() in FALSE_WORDS
        return cls(
            home=layers.home,
            project_dir=layers.project_dir,
            theme=chosen.get("theme") or DEFAULT_THEME,
            planning_provider=chosen.get("planning_provider") or DEFAULT_PROVIDER,
            planning_model=chosen.get("planning_model") or DEFAULT_PLANNING_MODEL,
            effective_memory_mode="off" if memory_off else chosen.get("memory_mode") or DEFAULT_MEMORY_MODE,
            keymap=_keymap(chosen.get("keymap", "")),
        )

    @classmethod
    def of(cls, settings: Any) -> FirstFrame:
        """The same view of validated settings (or any object with those fields)."""
        return cls(
            home=Path(settings.home),
            project_dir=Path(settings.project_dir),
            theme=str(getattr(settings, "theme", "") or DEFAULT_THEME),
            planning_provider=str(getattr(settings, "planning_provider", "")),
            planning_model=str(getattr(settings, "planning_model", "")),
            effective_memory_mode=str(
                getattr(settings, "effective_memory_mode", getattr(settings, "memory_mode", DEFAULT_MEMORY_MODE))
            ),
            keymap=dict(getattr(settings, "keymap", None) or {}),
        )


def _keymap(text: str) -> dict[str, str]:
    """A key map written as JSON, or nothing when it is not a JSON object of strings (validation reports that)."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return {}
    return value


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
    leading = re.match(r"\s*", chunk).group()
    cut = max(leading.rfind("\n"), leading.rfind("\r")) + 1
    ending = re.search(r"(?:\r\n|\n|\r)?\Z", chunk[cut:]).group()
    return chunk[:cut], chunk[cut : len(chunk) - len(ending)], ending
