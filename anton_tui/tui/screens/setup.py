"""The setup screen: provider, API key, models and memory settings, saved to the project's `.anton/.env`.

It opens by itself on first run (when `Runtime.needs_setup` is true) and from `/setup`. Saving checks every value
first and writes nothing when one is wrong; then the `save` it was given (the runtime's `save_settings`: Anton's
variable names in `.anton/.env`, mode 0600, other lines kept) writes them in a worker, and the screen dismisses with
the settings reloaded from disk, so the app can apply them at once.
"Try the demo" dismisses with `SetupOutcome.DEMO`; Escape dismisses with None and changes nothing.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from anton_tui.config import COMMAND_LINE, DEFAULT, ENVIRONMENT, Settings, SettingsError, needs_setup

PROVIDERS = [("Anthropic", "anthropic"), ("OpenAI", "openai"), ("OpenAI-compatible server", "openai-compatible")]
MEMORY_MODES = [
    ("autopilot — saves what it learns", "autopilot"),
    ("copilot — asks about what it is unsure of", "copilot"),
    ("off — reads memory, saves nothing", "off"),
]
ACC_MODES = [
    ("off", "off"),
    ("passive — turns repeated mistakes into rules", "passive"),
    ("active — also nudges Anton during a turn", "active"),
]
KEY_VARIABLE = {
    "anthropic": "ANTON_ANTHROPIC_API_KEY",
    "openai": "ANTON_OPENAI_API_KEY",
    "openai-compatible": "ANTON_OPENAI_API_KEY",
}
DEFAULT_MODELS = {"anthropic": ("claude-sonnet-4-6", "claude-haiku-4-5-20251001")}
SaveSettings = Callable[[dict[str, "str | None"]], Awaitable[Any]]
PROVIDER_NAMES = {value: label for label, value in PROVIDERS}


class SetupOutcome(enum.Enum):
    """A result of the setup screen that is not new settings."""

    DEMO = "demo"


class SetupError(ValueError):
    """A value the user entered cannot be saved; `field` is the id of the widget to fix."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def _has_key(settings: Any, provider: str) -> bool:
    secret = settings.anthropic_api_key if provider == "anthropic" else settings.openai_api_key
    return secret is not None and bool(secret.get_secret_value().strip())


@dataclass(frozen=True)
class SetupValues:
    provider: str
    api_key: str
    base_url: str
    planning_model: str
    coding_model: str
    memory_mode: str
    episodic_memory: bool
    acc_mode: str


def _one_line(value: str, what: str, field: str) -> str:
    if "\n" in value or "\r" in value:
        raise SetupError(f"{what} must be on one line.", field)
    return value.strip()


def _model(value: str, what: str, field: str) -> str:
    name = _one_line(value, what, field)
    if not name:
        raise SetupError(f"{what}: enter a model name.", field)
    if any(ch.isspace() for ch in name):
        raise SetupError(f"{what}: a model name has no spaces ({name!r}).", field)
    return name


KEY_PREFIX = {"anthropic": "sk-ant-", "openai": "sk-"}
_KEY_CHARACTERS = re.compile(r"[A-Za-z0-9_\-]")


def _check_key_shape(provider: str, key: str) -> None:
    """Refuse a key that cannot be the provider's, saying what looks wrong (a compatible server takes any key)."""
    prefix = KEY_PREFIX.get(provider)
    if prefix is None:
        return
    name = PROVIDER_NAMES[provider]
    if provider == "anthropic" and key.startswith("sk-") and not key.startswith(prefix):
        raise SetupError("That looks like an OpenAI key; Anthropic keys start with sk-ant-.", "api-key")
    if provider == "openai" and key.startswith(KEY_PREFIX["anthropic"]):
        raise SetupError("That looks like an Anthropic key; choose Anthropic as the provider, or paste an OpenAI "
                         "key (they start with sk-).", "api-key")  # fmt: skip
    if not key.startswith(prefix):
        raise SetupError(f"That is not an {name} API key: {name} keys start with {prefix} (this one starts with "
                         f"{key[:len(prefix)]!r}).", "api-key")  # fmt: skip
    odd = next((ch for ch in key if not _KEY_CHARACTERS.fullmatch(ch)), None)
    if odd is not None:
        raise SetupError(f"An {name} key has only letters, digits, - and _; this one has {odd!r}.", "api-key")


def env_updates(values: SetupValues, settings: Any) -> dict[str, str | None]:
    """The `.env` lines to write for `values` (None removes a line). Raises SetupError before anything is written."""
    if values.provider not in KEY_VARIABLE:
        raise SetupError("Choose a provider.", "provider")
    updates: dict[str, str | None] = {
        "ANTON_PLANNING_PROVIDER": values.provider,
        "ANTON_PLANNING_MODEL": _model(values.planning_model, "Planning model", "planning-model"),
        "ANTON_CODING_PROVIDER": values.provider,
        "ANTON_CODING_MODEL": _model(values.coding_model, "Coding model", "coding-model"),
    }
    key = _one_line(values.api_key, "The API key", "api-key")
    if any(ch.isspace() for ch in key):
        raise SetupError("The API key has a space in it; paste just the key.", "api-key")
    if key:
        _check_key_shape(values.provider, key)
        updates[KEY_VARIABLE[values.provider]] = key
    elif values.provider != "openai-compatible" and not _has_key(settings, values.provider):
        raise SetupError(f"Enter your {PROVIDER_NAMES[values.provider]} API key (or try the demo).", "api-key")
    base_url = _one_line(values.base_url, "The base URL", "base-url")
    if values.provider == "openai-compatible":
        parsed = urlparse(base_url)
        if not base_url:
            example = "http://localhost:11434/v1"
            raise SetupError(f"An OpenAI-compatible server needs its base URL (e.g. {example}).", "base-url")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise SetupError(f"The base URL must start with http:// or https:// ({base_url!r}).", "base-url")
        updates["ANTON_OPENAI_BASE_URL"] = base_url
    elif values.provider == "openai":
        updates["ANTON_OPENAI_BASE_URL"] = None  # the official API: drop a compatible server's URL from this project
    if values.memory_mode not in {v: v for _, v in MEMORY_MODES}:
        raise SetupError("Choose a memory mode.", "memory-mode")
    if values.acc_mode not in {v: v for _, v in ACC_MODES}:
        raise SetupError("Choose a self-check (ACC) mode.", "acc-mode")
    updates["ANTON_MEMORY_MODE"] = values.memory_mode
    updates["ANTON_EPISODIC_MEMORY"] = "true" if values.episodic_memory else "false"
    updates["ANTON_ACC_MODE"] = values.acc_mode
    return updates


_FIELD_OF = {
    "ANTON_PLANNING_PROVIDER": "planning_provider",
    "ANTON_PLANNING_MODEL": "planning_model",
    "ANTON_CODING_PROVIDER": "coding_provider",
    "ANTON_CODING_MODEL": "coding_model",
    "ANTON_OPENAI_BASE_URL": "openai_base_url",
    "ANTON_MEMORY_MODE": "memory_mode",
    "ANTON_EPISODIC_MEMORY": "episodic_memory",
    "ANTON_ACC_MODE": "acc_mode",
}


_KEY_FIELD = {"ANTON_ANTHROPIC_API_KEY": "anthropic_api_key", "ANTON_OPENAI_API_KEY": "openai_api_key"}


def overridden(updates: dict[str, str | None], settings: Any) -> list[str]:
    """The environment variables that win over values just written (so the saved value is not the one in use)."""
    fields = _FIELD_OF | _KEY_FIELD
    return [
        settings.variable_of(field)
        for name, field in fields.items()
        if name in updates and settings.source_of(field) == ENVIRONMENT
    ]


def environment_overrides(settings: Any) -> list[str]:
    """Every variable of the setup screen whose value in use comes from the environment rather than a .env file."""
    fields = dict.fromkeys([*_FIELD_OF.values(), *_KEY_FIELD.values()])
    return [settings.variable_of(field) for field in fields if settings.source_of(field) == ENVIRONMENT]


def key_field(provider: str) -> str:
    return "anthropic_api_key" if provider == "anthropic" else "openai_api_key"


def source_note(settings: Any, field: str) -> str:
    """Where the value in use of `field` comes from, in words, and whether a value saved here would be used."""
    source = settings.source_of(field)
    if source == ENVIRONMENT:
        return f"in effect: {settings.variable_of(field)} from the environment; a value saved here is not used while " \
               "it is set"  # fmt: skip
    if source == COMMAND_LINE:
        return "in effect: the command line (for this run only)"
    if source == DEFAULT:
        return "in effect: the default (nothing sets it)"
    if source == str(settings.project_dir / ".anton" / ".env"):
        return "in effect: .anton/.env of this project"
    if source == str(settings.home / ".env"):
        return "in effect: the global .env (all projects); saving here writes this project's, which wins"
    return f"in effect: {source}"


class SetupScreen(ModalScreen["Settings | SetupOutcome | None"]):
    """Edit the provider, key, models and memory settings of this project."""

    CSS_PATH = "setup.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="setup.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="setup.cancel"),
    ]
    HELP = """\
## Setup

Choose the model provider and paste its API key (it is stored in the project's `.anton/.env`, readable only by
you; leave the key empty to keep the one already saved). An OpenAI-compatible server (Ollama, vLLM, LM Studio…)
needs its base URL. The memory mode decides whether Anton saves what it learns on its own (autopilot), asks first
when unsure (copilot) or saves nothing (off). **Ctrl+S** saves, **Escape** leaves everything as it was.
"""

    def __init__(
        self, settings: Settings, save: SaveSettings, *, first_run: bool = False, can_demo: bool = True
    ) -> None:
        """`save(updates)` writes the `.env` updates and returns the settings as they then load."""
        super().__init__()
        self.settings = settings
        self.save = save
        self.first_run = first_run
        self.can_demo = can_demo

    def _row(self, label: str, widget: Any, row_id: str, field: str | None = None) -> Horizontal:
        note = Static(Content(source_note(self.settings, field) if field else ""), classes="setup-source")
        box = Vertical(widget, note, classes="setup-field")
        return Horizontal(Label(label, classes="setup-label"), box, classes="setup-row", id=row_id)

    def compose(self) -> ComposeResult:
        s = self.settings
        title = "Welcome to Anton — let's connect a model" if self.first_run else "Setup"
        with Vertical(id="setup-dialog"):
            yield Label(Content(title), id="setup-title")
            yield Static(Content(f"Saved to {_relative_env(s)} (only you can read it)."), id="setup-where")
            with VerticalScroll(id="setup-form", can_focus=False):  # the focused field scrolls into view
                provider = _select(PROVIDERS, s.planning_provider, "provider")
                yield self._row("Provider", provider, "row-provider", "planning_provider")
                key_hint = self._key_placeholder(s.planning_provider)
                key = _input("", "api-key", key_hint, password=True)
                yield self._row("API key", key, "row-api-key", key_field(s.planning_provider))
                base_url = _input(s.openai_base_url or "", "base-url", "http://localhost:11434/v1")
                yield self._row("Base URL", base_url, "row-base-url", "openai_base_url")
                planning = _input(s.planning_model, "planning-model")
                yield self._row("Planning model", planning, "row-planning-model", "planning_model")
                yield self._row(
                    "Coding model", _input(s.coding_model, "coding-model"), "row-coding-model", "coding_model"
                )
                memory = _select(MEMORY_MODES, s.memory_mode, "memory-mode")
                yield self._row("Memory mode", memory, "row-memory-mode", "memory_mode")
                episodic = Horizontal(
                    Switch(bool(s.episodic_memory), id="episodic"),
                    Label(_on_off(s.episodic_memory), id="episodic-state"),
                    id="episodic-box",
                )
                yield self._row("Episodic memory", episodic, "row-episodic", "episodic_memory")
                acc = _select(ACC_MODES, s.acc_mode, "acc-mode")
                yield self._row("Self-check (ACC)", acc, "row-acc-mode", "acc_mode")
            yield Static("", id="setup-error", markup=False)
            with Horizontal(id="setup-buttons"):
                yield Button("Save", variant="primary", id="setup-save")
                if self.can_demo:
                    yield Button("Try the demo", id="setup-demo")
                yield Button("Cancel", id="setup-cancel")

    def on_mount(self) -> None:
        try:
            blink = bool(getattr(self.app, "cursor_blink", True))
            for input_widget in self.query(Input):
                input_widget.cursor_blink = blink
            self._show_base_url(self.settings.planning_provider)
            self.query_one("#api-key" if needs_setup(self.settings) else "#provider").focus()
        except NoMatches:
            pass  # the app quit while this screen was opening, and its widgets are already gone

    def _key_placeholder(self, provider: str) -> str:
        field = key_field(provider)
        if _has_key(self.settings, provider) and self.settings.source_of(field) == ENVIRONMENT:
            return f"{self.settings.variable_of(field)} from the environment is used; a key typed here is saved"
        if _has_key(self.settings, provider):
            return "a key is saved — leave empty to keep it"
        if provider == "openai-compatible":
            return "optional for most local servers"
        return f"paste your {PROVIDER_NAMES[provider]} API key"

    def _show_base_url(self, provider: str) -> None:
        self.query_one("#row-base-url").display = provider == "openai-compatible"

    @on(Select.Changed, "#provider")
    def _provider_changed(self, event: Select.Changed) -> None:
        provider = str(event.value)
        self._show_base_url(provider)
        self.query_one("#api-key", Input).placeholder = self._key_placeholder(provider)
        note = source_note(self.settings, key_field(provider))
        self.query_one("#row-api-key .setup-source", Static).update(Content(note))
        planning, coding = self.query_one("#planning-model", Input), self.query_one("#coding-model", Input)
        known = {model for pair in DEFAULT_MODELS.values() for model in pair}
        suggested = DEFAULT_MODELS.get(provider, ("", ""))
        for widget, model in ((planning, suggested[0]), (coding, suggested[1])):
            if not widget.value.strip() or widget.value in known:
                widget.value = model

    @on(Switch.Changed, "#episodic")
    def _episodic_changed(self, event: Switch.Changed) -> None:
        self.query_one("#episodic-state", Label).update(_on_off(event.value))

    def values(self) -> SetupValues:
        return SetupValues(
            provider=str(self.query_one("#provider", Select).value),
            api_key=self.query_one("#api-key", Input).value,
            base_url=self.query_one("#base-url", Input).value,
            planning_model=self.query_one("#planning-model", Input).value,
            coding_model=self.query_one("#coding-model", Input).value,
            memory_mode=str(self.query_one("#memory-mode", Select).value),
            episodic_memory=self.query_one("#episodic", Switch).value,
            acc_mode=str(self.query_one("#acc-mode", Select).value),
        )

    def _refuse(self, message: str, field: str | None = None) -> None:
        self.query_one("#setup-error", Static).update(message)
        self.notify(message, title="Not saved", severity="error")
        if field:
            self.query_one(f"#{field}").focus()

    def action_save(self) -> None:
        try:
            updates = env_updates(self.values(), self.settings)
        except SetupError as exc:
            self._refuse(str(exc), exc.field)
            return
        self.write(updates)

    @work(group="setup-save", exclusive=True, exit_on_error=False)
    async def write(self, updates: dict[str, str | None]) -> None:
        try:
            reloaded = await self.save(updates)
        except SettingsError as exc:
            self._refuse(f"Saved, but the settings do not load: {exc}")
            return
        except (ValueError, OSError) as exc:
            self._refuse(f"Could not write {_relative_env(self.settings)}: {exc}")
            return
        shadowed = overridden(updates, reloaded)
        if shadowed:
            self.app.notify(
                f"Saved, but the environment overrides {', '.join(shadowed)}: the environment's value stays in "
                "effect until it is unset.",
                title="Setup",
                severity="warning",
            )
        self.dismiss(reloaded)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#setup-save")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#setup-demo")
    def _demo_pressed(self) -> None:
        self.dismiss(SetupOutcome.DEMO)

    @on(Button.Pressed, "#setup-cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)


def _on_off(value: bool) -> str:
    return "on — every conversation is logged for recall" if value else "off"


def _relative_env(settings: Any) -> str:
    return f"{settings.project_dir.name or settings.project_dir}/.anton/.env"


def _select(options: list[tuple[str, str]], value: str, widget_id: str) -> Select[str]:
    return Select(options, value=value, allow_blank=False, compact=True, id=widget_id)


def _input(value: str, widget_id: str, placeholder: str = "", *, password: bool = False) -> Input:
    return Input(value, placeholder=placeholder, password=password, compact=True, id=widget_id)
