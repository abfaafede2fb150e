"""The setup screen: provider, API key, models and memory settings, saved to the project's `.anton/.env`.

It opens by itself on first run (when `Runtime.needs_setup` is true) and from `/setup`. Saving has the engine check
every value first (`anton_tui.settings_form`, which also names Anton's variables) and writes nothing when one is
wrong; then the `save` it was given (the runtime's `save_settings`: `.anton/.env`, mode 0600, other lines kept)
writes them in a worker, and the screen dismisses with the settings reloaded from disk, so the app can apply them at
once.
"Try the demo" dismisses with `SetupOutcome.DEMO`; Escape dismisses with None and changes nothing.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static, Switch

from anton_tui.config import Settings, SettingsError
from anton_tui.settings_form import (
    PROVIDER_TITLES,
    SUGGESTED_MODELS,
    SetupError,
    SetupValues,
    environment_overrides,
    key_field,
    key_in_environment,
    overridden,
    setup_updates,
    source_note,
)
from anton_tui.settings_sources import setting_choices

__all__ = ["SetupOutcome", "SetupScreen", "environment_overrides"]

PROVIDERS = [(PROVIDER_TITLES[provider], provider) for provider in PROVIDER_TITLES]
MEMORY_MODE_LABELS = {
    "autopilot": "autopilot — saves what it learns",
    "copilot": "copilot — asks about what it is unsure of",
    "off": "off — reads memory, saves nothing",
}
ACC_MODE_LABELS = {
    "off": "off",
    "passive": "passive — turns repeated mistakes into rules",
    "active": "active — also nudges Anton during a turn",
}
REVIEW_LABELS = {
    "ai": "ai — an AI reviewer approves or rejects",
    "human": "human — each change waits for you",
    "none": "none — applied without review",
}
MEMORY_MODES = [(MEMORY_MODE_LABELS[mode], mode) for mode in setting_choices("memory_mode")]
REVIEW_LEVELS = [(REVIEW_LABELS[level], level) for level in setting_choices("review_level")]
ACC_MODES = [(ACC_MODE_LABELS[mode], mode) for mode in setting_choices("acc_mode")]
SaveSettings = Callable[[dict[str, "str | None"]], Awaitable[Settings]]


class SetupOutcome(enum.Enum):
    """A result of the setup screen that is not new settings."""

    DEMO = "demo"


def _widget_id(entry: str) -> str:
    """The id of the field of a `SetupValues` entry (`api_key` is `#api-key`)."""
    return entry.replace("_", "-")


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
when unsure (copilot) or saves nothing (off). The review decides who approves the changes Anton proposes to its own
memory and skills (its reflections, `/skill save`): an AI reviewer, you, or no one; changes made from untrusted input
have their own level, and at most so many changes a day are applied without you. Reflection writes daily, weekly
and monthly notes once a period with enough messages has ended. **Ctrl+S** saves, **Escape** leaves everything as it
was.
"""

    def __init__(
        self,
        settings: Settings,
        save: SaveSettings,
        *,
        cursor_blink: bool,
        first_run: bool = False,
        can_demo: bool = True,
    ) -> None:
        """`save(updates)` writes the `.env` updates and returns the settings as they then load; `cursor_blink` is
        the app's setting for the text fields."""
        super().__init__()
        self.settings = settings
        self.save = save
        self.cursor_blink = cursor_blink
        self.first_run = first_run
        self.can_demo = can_demo

    def _row(self, label: str, widget: Widget, row_id: str, field: str | None = None) -> Horizontal:
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
                review = _select(REVIEW_LEVELS, s.review_level, "review-level")
                yield self._row("Review of changes", review, "row-review-level", "review_level")
                tainted = _select(REVIEW_LEVELS, s.review_tainted, "review-tainted")
                yield self._row("Untrusted review", tainted, "row-review-tainted", "review_tainted")
                per_day = _input(str(s.review_max_per_day), "review-max-per-day")
                yield self._row("Changes per day", per_day, "row-review-max-per-day", "review_max_per_day")
                reflection = Horizontal(
                    Switch(bool(s.reflection), id="reflection"),
                    Label(_reflection_state(s.reflection), id="reflection-state"),
                    id="reflection-box",
                )
                yield self._row("Reflection", reflection, "row-reflection", "reflection")
                threshold = _input(str(s.reflection_min_messages), "reflection-min-messages")
                yield self._row("Min. messages", threshold, "row-reflection-min-messages", "reflection_min_messages")
                idle = _input(str(s.conversation_idle_minutes), "conversation-idle-minutes")
                yield self._row("Idle minutes", idle, "row-conversation-idle-minutes", "conversation_idle_minutes")
            yield Static("", id="setup-error", markup=False)
            with Horizontal(id="setup-buttons"):
                yield Button("Save", variant="primary", id="setup-save")
                if self.can_demo:
                    yield Button("Try the demo", id="setup-demo")
                yield Button("Cancel", id="setup-cancel")

    def on_mount(self) -> None:
        try:
            for input_widget in self.query(Input):
                input_widget.cursor_blink = self.cursor_blink
            self._show_base_url(self.settings.planning_provider)
            self.query_one("#api-key" if self.settings.needs_setup() else "#provider").focus()
        except NoMatches:
            pass  # the app quit while this screen was opening, and its widgets are already gone

    def _key_placeholder(self, provider: str) -> str:
        from_environment = key_in_environment(self.settings, provider)
        if from_environment is not None:
            return f"{from_environment} from the environment is used; a key typed here is saved"
        if self.settings.has_key(provider):
            return "a key is saved — leave empty to keep it"
        if provider == "openai-compatible":
            return "optional for most local servers"
        return f"paste your {PROVIDER_TITLES.get(provider, provider)} API key"

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
        known = {model for pair in SUGGESTED_MODELS.values() for model in pair}
        suggested = SUGGESTED_MODELS.get(provider, ("", ""))
        for widget, model in ((planning, suggested[0]), (coding, suggested[1])):
            if not widget.value.strip() or widget.value in known:
                widget.value = model

    @on(Switch.Changed, "#episodic")
    def _episodic_changed(self, event: Switch.Changed) -> None:
        self.query_one("#episodic-state", Label).update(_on_off(event.value))

    @on(Switch.Changed, "#reflection")
    def _reflection_changed(self, event: Switch.Changed) -> None:
        self.query_one("#reflection-state", Label).update(_reflection_state(event.value))

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
            review_level=str(self.query_one("#review-level", Select).value),
            review_tainted=str(self.query_one("#review-tainted", Select).value),
            review_max_per_day=self.query_one("#review-max-per-day", Input).value,
            reflection=self.query_one("#reflection", Switch).value,
            reflection_min_messages=self.query_one("#reflection-min-messages", Input).value,
            conversation_idle_minutes=self.query_one("#conversation-idle-minutes", Input).value,
        )

    def _refuse(self, message: str, field: str | None = None) -> None:
        self.query_one("#setup-error", Static).update(message)
        self.notify(message, title="Not saved", severity="error")
        if field:
            self.query_one(f"#{field}").focus()

    def action_save(self) -> None:
        try:
            updates = setup_updates(self.values(), self.settings)
        except SetupError as exc:
            self._refuse(str(exc), _widget_id(exc.entry))
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


def _reflection_state(value: bool) -> str:
    return "on — due reflections are written at start and when idle" if value else "off"


def _relative_env(settings: Settings) -> str:
    return f"{settings.project_dir.name or settings.project_dir}/.anton/.env"


def _select(options: list[tuple[str, str]], value: str, widget_id: str) -> Select[str]:
    return Select(options, value=value, allow_blank=False, compact=True, id=widget_id)


def _input(value: str, widget_id: str, placeholder: str = "", *, password: bool = False) -> Input:
    return Input(value, placeholder=placeholder, password=password, compact=True, id=widget_id)
