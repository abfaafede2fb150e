"""What changes when the app runs in a browser tab (`anton-tui serve`): copying, links and downloads.

`anton-tui serve` tells the apps it starts whether the browser lets the page use its clipboard (`SERVED_ENV`): it
does over https and at a loopback address, and not over plain http from another machine. Where it does, copying
goes to the browser's clipboard as it goes to the terminal's (OSC 52, which the page's xterm.js hands on); where it
does not, the copied text is shown in a dialog to select, or to open in a new browser tab as a plain text page.
Links open in a new browser tab, and only web and mail links do (a `javascript:` one would run in the page).
`deliver_text_file` hands a text to the browser as a download. Bell and desktop notifications stay inside the app
(see `attention.py`).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen

from anton_tui.serve import SERVED_ENV, WITHOUT_CLIPBOARD

LINK_SCHEMES = ("http", "https", "mailto")
_UNSAFE_IN_A_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class BrowserTab:
    """The app runs in a browser tab; `clipboard`: the page may write to the browser's clipboard."""

    clipboard: bool

    @classmethod
    def of(cls, app: App[Any], environ: Mapping[str, str] | None = None) -> BrowserTab | None:
        """The tab `app` runs in, or None in a terminal."""
        if not app.is_web:
            return None
        env = os.environ if environ is None else environ
        return cls(clipboard=env.get(SERVED_ENV) != WITHOUT_CLIPBOARD)

    def copied(self, app: App[Any], text: str) -> None:
        """After `App.copy_to_clipboard`: without the browser's clipboard, show the text to select."""
        if not self.clipboard and not isinstance(app.screen, CopiedText):
            app.push_screen(CopiedText(text))


def link_opens(url: str) -> bool:
    """Whether a link may open from a browser tab: web and mail addresses only."""
    return urlsplit(url.strip()).scheme.lower() in LINK_SCHEMES


def file_name(name: str) -> str:
    """`name` as a download's file name: letters, digits, `.`, `_` and `-` (the rest become `-`)."""
    cleaned = _UNSAFE_IN_A_NAME.sub("-", name).strip(".-")
    return cleaned or "anton-tui.txt"


def deliver_text_file(
    app: App[Any], text: str, name: str, *, open_method: Literal["download", "browser"] = "download"
) -> str | None:
    """Hand `text` to the browser as the file `name` (a download, or with "browser" a page in a new tab); returns
    the delivery's key, or None when the app does not run in a browser (the caller then writes the file itself)."""
    if not app.is_web:
        return None
    return app.deliver_text(
        io.StringIO(text), save_filename=file_name(name), open_method=open_method, encoding="utf-8",
        mime_type="text/plain",
    )  # fmt: skip


class CopiedText(ModalScreen[None]):
    """Copied text, shown to select where the browser gives the page no clipboard."""

    DEFAULT_CSS = """
    CopiedText { align: center middle; }
    CopiedText > Vertical { width: 90%; height: 80%; border: round $primary; background: $surface; padding: 0 1; }
    CopiedText #why { color: $text-muted; padding-bottom: 1; }
    CopiedText TextArea { height: 1fr; }
    """
    BINDINGS = [
        Binding("o", "open_in_tab", "Open in a new tab", id="copied.open-in-tab"),
        Binding("escape", "dismiss", "Close", id="copied.close"),
    ]
    HELP = """\
This browser gives the page no clipboard (it does over https, or at a loopback address such as 127.0.0.1).
Select the text with the mouse while holding **Shift** (not on a Mac) and copy it with the browser's menu, or press
**o** to open it as a plain page in a new tab.
"""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        from textual.containers import Vertical  # the app imports this module: the widgets load when it is shown
        from textual.widgets import Footer, Static, TextArea

        with Vertical():
            yield Static(
                "This browser gives the page no clipboard over plain http. Select the text with the mouse while "
                "holding Shift (not on a Mac) and copy it with the browser's menu, or press o to open it in a new tab.",
                id="why",
            )
            yield TextArea(self.text, read_only=True, soft_wrap=True)
        yield Footer()

    def action_open_in_tab(self) -> None:
        deliver_text_file(self.app, self.text, "copied.txt", open_method="browser")
