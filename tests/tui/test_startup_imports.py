"""Start-up stays light: the real app paints its first frame before pydantic, any LLM SDK, watchdog, Markdown parser,
syntax highlighter, YAML parser, the command table or the engine behind the runtime (its memory stores, the episode
index) is imported
(the settings are validated and the runtime built right after it); the warm-up after it
loads the Markdown parser, the highlighter and the command table, so the first answer, the first code shown and the
first `/` typed do not wait for them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

PROBE = textwrap.dedent(
    """
    import asyncio, json, sys
    from anton_tui.settings_sources import read_env_layers
    from anton_tui.tui.app import AntonApp
    from anton_tui.tui.launch import make_app
    from anton_tui.tui.screens.main import MainScreen
    from anton_tui.tui.textual_internals import FrameHook

    def heavy():
        lazy = ("anthropic", "openai", "watchdog", "inotify_simple", "markdown_it", "pygments", "yaml", "pydantic",
                "pydantic_settings", "detect_secrets", "dulwich", "tantivy", "anton_tui.runtime.runtime",
                "anton_tui.memory.stores", "anton_tui.agent.session", "anton_tui.tui.commands.registry")
        return [m for m in lazy if m in sys.modules]

    seen = {}
    WARMED = ("markdown_it", "pygments", "anton_tui.tui.commands.registry")

    class Probe(FrameHook, AntonApp):
        def frame_written(self, screen, renderable):
            if isinstance(screen, MainScreen):
                seen.setdefault("first_frame", heavy())  # as the main screen's first frame is written

    async def main():
        app = make_app(read_env_layers(), app_class=Probe)  # as `anton-tui` makes it
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(100):
                if app._watcher is not None:
                    break
                await pilot.pause(0.05)
            seen["after_watchers"] = [m for m in ("anthropic", "openai", "watchdog") if m in sys.modules]
            for _ in range(200):  # the warm-up follows the watcher
                if all(m in sys.modules for m in WARMED):
                    break
                await pilot.pause(0.05)
            seen["after_warm_up"] = [m for m in WARMED if m in sys.modules]
        print(json.dumps(seen))

    asyncio.run(main())
    """
)


def start(project_dir: Path) -> dict[str, list[str]]:
    env = {**os.environ, "ANTON_ANTHROPIC_API_KEY": "sk-test-not-used"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=project_dir, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_first_frame_imports_no_sdk_nor_parsers_and_watchdog_comes_after(anton_home: Path, project_dir: Path) -> None:
    seen = start(project_dir)
    assert seen["first_frame"] == [], f"imported before the first frame was painted: {seen['first_frame']}"
    assert "watchdog" in seen["after_watchers"]
    assert seen["after_warm_up"] == ["markdown_it", "pygments", "anton_tui.tui.commands.registry"], (
        "the first answer and code find their parsers loaded, and the first `/` its menu"
    )
