"""Running the app as `anton-tui` does: the starter for the settings' sources, the app, and the demo hand-over.

`run_app(layers)` is what the command line calls; `make_app` is the same app for the benchmarks' probes.
"""

from __future__ import annotations

from typing import Any

from anton_tui.runtime import RuntimeStarter
from anton_tui.settings_sources import EnvLayers
from anton_tui.tui.app import AntonApp


def make_app(
    layers: EnvLayers, *, theme: str | None = None, demo: bool = False, resume: str | None = None,
    skills: tuple[str, ...] = (), app_class: type[AntonApp] = AntonApp, **options: Any,
) -> AntonApp:  # fmt: skip
    """The app for these settings' sources, watching its files; `resume` names a saved conversation to continue
    ("" for the newest); `skills` are preloaded for the conversation; `options` are `AntonApp`'s keyword arguments."""
    starter = RuntimeStarter(layers, theme=theme, demo=demo, resume=resume, skills=skills)
    return app_class(starter, **({"watch_files": True} | options))


def run_app(
    layers: EnvLayers, *, theme: str | None = None, demo: bool = False, resume: str | None = None,
    skills: tuple[str, ...] = (),
) -> int:  # fmt: skip
    """Run the full-screen app until the user quits; returns the exit code.

    With `demo=True` the conversation is a recorded one replayed through the real engine in a throw-away folder.
    On first run (no API key) the setup screen opens by itself and offers the demo. Raises `SettingsError` when a
    bad setting stopped the start and the user chose to quit.
    """
    while True:
        app = make_app(layers, theme=theme, demo=demo, resume=None if demo else resume, skills=() if demo else skills)
        app.run()
        if app.settings_error is not None and app.return_code:
            raise app.settings_error
        if not app.switch_to_demo:
            return app.return_code or 0
        demo = True
