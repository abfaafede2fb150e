"""Whether text cursors blink: the app's own choice (`AntonApp(cursor_blink=False)` keeps tests and snapshots still),
read by the screens and widgets that make an input of their own."""

from __future__ import annotations

from typing import Any

from textual.app import App


def cursor_blinks(app: App[Any]) -> bool:
    """The app's `cursor_blink` when it is anton-tui's app; Textual's default (blinking) in any other."""
    from anton_tui.tui.app import AntonApp

    return app.cursor_blink if isinstance(app, AntonApp) else True
