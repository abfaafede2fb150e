"""Start-up stays light: the real app paints its first frame before pydantic, any LLM SDK, watchdog, Markdown parser,
syntax highlighter or YAML parser is imported (the settings are validated right after it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PROBE = textwrap.dedent(
    """
    import asyncio, sys
    from anton_tui.settings_sources import read_env_layers
    from anton_tui.tui.app import AntonApp
    from anton_tui.tui.launch import make_app

    def heavy():
        lazy = ("anthropic", "openai", "watchdog", "markdown_it", "pygments", "yaml", "pydantic", "pydantic_settings",
                "detect_secrets", "dulwich")
        return [m for m in lazy if m in sys.modules]

    seen = {}

    class Probe(AntonApp):
        def on_mount(self):
            self.call_after_refresh(lambda: seen.setdefault("first_frame", heavy()))  # before the app's own
            super().on_mount()

    async def main():
        app = make_app(read_env_layers(), app_class=Probe)  # as `anton-tui` makes it
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(100):
                if app._watcher is not None:
                    break
                await pilot.pause(0.05)
            seen["after_watchers"] = [m for m in ("anthropic", "openai", "watchdog") if m in sys.modules]
        print(seen["first_frame"], seen["after_watchers"])

    asyncio.run(main())
    """
)


def start(project_dir: Path) -> tuple[str, str]:
    env = {**os.environ, "ANTON_ANTHROPIC_API_KEY": "sk-test-not-used"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=project_dir, timeout=60
    )
    assert result.returncode == 0, result.stderr
    first_frame, after_watchers = result.stdout.strip().splitlines()[-1].split("] [")
    return first_frame + "]", "[" + after_watchers


def test_first_frame_imports_no_sdk_nor_parsers_and_watchdog_comes_after(anton_home: Path, project_dir: Path) -> None:
    first_frame, after_watchers = start(project_dir)
    assert first_frame == "[]", f"imported before the first frame was painted: {first_frame}"
    assert "watchdog" in after_watchers
