"""What a slash command works with (`CommandContext`) and what it hands back to the chat (`CommandOutput`).

Commands read and change the memory stores directly; anything that needs the app (opening a screen, asking the
user, drafting a skill with the model) goes through a hook the app fills in. A hook may be a plain function or a
coroutine function; `CommandContext.call` awaits whichever it gets.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import Console, RenderableType
from rich.text import Text

from anton_tui.tui.stores import MemoryStores

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


@dataclass
class CommandContext:
    """The stores and settings a command reads, and the hooks through which it asks the app to act.

    Hooks left as None make the commands that need them answer that the action is not available here.
    `confirm(question) -> bool` must actually ask the user: destructive commands do nothing without a yes.
    `ask_text(question, current) -> str | None` lets `/memory … edit <n>` open an editor when no text was typed.
    `save_skill(hint)` and `compact_now()` may return a `CommandOutput`, a string, or a list of lines.
    """

    stores: MemoryStores
    settings: Any
    open_setup: Hook | None = None
    open_skills: Hook | None = None
    set_theme: Hook | None = None
    theme_names: Callable[[], Iterable[str]] | None = None
    current_theme: Callable[[], str] | None = None
    clear_chat: Hook | None = None
    exit_app: Hook | None = None
    confirm: Hook | None = None
    ask_text: Hook | None = None
    save_skill: Hook | None = None
    compact_now: Hook | None = None

    @staticmethod
    async def call(hook: Hook, *args: Any) -> Any:
        result = hook(*args)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def ask(self, question: str) -> bool:
        """The user's answer to a yes/no question; no without a `confirm` hook."""
        if self.confirm is None:
            return False
        return bool(await self.call(self.confirm, question))

    def themes(self) -> list[str]:
        return sorted(self.theme_names()) if self.theme_names is not None else []


def as_output(result: Any, *, default: str, level: Level = "success") -> CommandOutput:
    """Turn what a hook returned into a reply: outputs pass through, text and lists of lines become plain text."""
    if isinstance(result, CommandOutput):
        return result
    if isinstance(result, str) and result.strip():
        return CommandOutput(result, level)
    if isinstance(result, (list, tuple)) and result:
        return CommandOutput("\n".join(str(line) for line in result), level)
    return CommandOutput(default, level)
