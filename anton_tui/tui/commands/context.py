"""What a slash command works with (`CommandContext`) and what it hands back to the chat (`CommandOutput`).

Commands work through the `Runtime` (its snapshots of memory and skills, its operations, the model); anything that
needs the app (opening a screen, asking the user) goes through the app's `CommandUI` methods. A method may be a plain function or a coroutine
function; `CommandContext.call` awaits whichever it gets.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from rich.console import Console, RenderableType
from rich.text import Text

if TYPE_CHECKING:
    from anton_tui.runtime import Runtime

Level = Literal["info", "success", "warning", "error"]
Hook = Callable[..., Any]


@dataclass
class CommandOutput:
    """One reply to a slash command. `content` is a Rich renderable, or Markdown text when `markdown` is True.

    A plain `str` with `markdown=False` is shown literally (never parsed as Rich markup), so `[always]` stays visible.
    """

    content: RenderableType | str
    level: Level = "info"
    markdown: bool = False

    @property
    def renderable(self) -> RenderableType:
        if self.markdown:
            from rich.markdown import Markdown  # markdown-it: imported with the first reply that needs it

            return Markdown(str(self.content))
        if isinstance(self.content, str):
            return Text(self.content)
        return self.content

    def plain(self, width: int = 100) -> str:
        """The reply as plain text, the way a terminal `width` columns wide would show it."""
        console = Console(width=width, file=io.StringIO(), color_system=None, record=True, legacy_windows=False)
        console.print(self.renderable)
        return console.export_text(styles=False)


def info(text: str) -> CommandOutput:
    return CommandOutput(text, "info")


def success(text: str) -> CommandOutput:
    return CommandOutput(text, "success")


def warning(text: str) -> CommandOutput:
    return CommandOutput(text, "warning")


def error(text: str) -> CommandOutput:
    return CommandOutput(text, "error")


class CommandUI(Protocol):
    """What a command may ask of the app. Each method may be a plain function or a coroutine function, and an app
    may leave any of them out (or set it to None): the commands that need it then answer that it is not available.
    `confirm(question) -> bool` must actually ask the user: destructive commands do nothing without a yes.
    `ask_text(question, current) -> str | None` lets `/memory … edit <n>` open an editor when no text was typed.
    `choose_skills(source, offers) -> list[str] | None` lets `/skill install` show the skills found in one list."""

    def open_setup(self) -> Any: ...
    def open_skills(self, label: str | None = None) -> Any: ...
    def open_reflections(self) -> Any: ...
    def set_theme(self, name: str) -> Any: ...
    def theme_names(self) -> Iterable[str]: ...
    def current_theme_name(self) -> str: ...
    def clear_chat(self) -> Any: ...
    def send_prompt(self, text: str) -> Any: ...
    def fill_prompt(self, text: str) -> Any: ...
    def start_goal(self, objective: str, max_turns: int) -> Any: ...
    def exit_app(self) -> Any: ...
    def confirm(self, question: str) -> Any: ...
    def ask_text(self, question: str, current: str = "") -> Any: ...
    def choose_skills(self, source: str, offers: list[Any]) -> Any: ...


@dataclass
class CommandContext:
    """The `Runtime` a command works with, and the app (`ui`) it may ask to open a screen or ask the user."""

    runtime: Runtime
    ui: CommandUI | None = None

    @property
    def settings(self) -> Any:
        return self.runtime.settings

    def hook(self, name: str) -> Hook | None:
        """The app's `name` method, or None when this app has none."""
        return getattr(self.ui, name, None) if self.ui is not None else None

    @staticmethod
    async def call(hook: Hook, *args: Any) -> Any:
        result = hook(*args)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def ask(self, question: str) -> bool:
        """The user's answer to a yes/no question; no when the app cannot ask."""
        confirm = self.hook("confirm")
        if confirm is None:
            return False
        return bool(await self.call(confirm, question))

    def themes(self) -> list[str]:
        names = self.hook("theme_names")
        return sorted(names()) if names is not None else []

    def current_theme(self) -> str:
        current = self.hook("current_theme_name")
        return current() if current is not None else ""


def as_output(result: Any, *, default: str, level: Level = "success") -> CommandOutput:
    """Turn what a hook returned into a reply: outputs pass through, text and lists of lines become plain text."""
    if isinstance(result, CommandOutput):
        return result
    if isinstance(result, str) and result.strip():
        return CommandOutput(result, level)
    if isinstance(result, (list, tuple)) and result:
        return CommandOutput("\n".join(str(line) for line in result), level)
    return CommandOutput(default, level)
