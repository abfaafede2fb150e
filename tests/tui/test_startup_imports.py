"""Start-up stays light: the real app paints its first frame before any LLM SDK, watchdog, Markdown parser, syntax
highlighter or YAML parser is imported."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PROBE = textwrap.dedent(
    """
    import asyncio, sys
    from anton_tui.config import load_settings
    from anton_tui.tui.app import build_app

    def heavy():
        lazy = ("anthropic", "openai", "watchdog", "markdown_it", "pygments", "yaml")
        return [m for m in lazy if m in sys.modules]

    async def main():
        seen = {}
        app = build_app(load_settings())  # the real session, stores and inspector
        seen["first_frame"] = heavy()
        start_watching = app.start_watching

        def watch_after_recording():  # the app starts its watcher once the first frame is painted
            seen["first_frame"] += heavy()
            return start_watching()

        app.start_watching = watch_after_recording
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(100):
                if app._watcher is not None:
                    break
                await pilot.pause(0.05)
            seen["after_watchers"] = [m for m in ("anthropic", "openai", "watchdog") if m in sys.modules]
        print(sorted(set(seen["first_frame"])), seen["after_watchers"])

    asyncio.run(main())
    """
)


def test_first_frame_imports_no_sdk_nor_parsers_and_watchdog_comes_after(anton_home: Path, project_dir: Path) -> None:
    env = {**os.environ, "ANTON_ANTHROPIC_API_KEY": "sk-test-not-used"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=project_dir, timeout=60
    )
    assert result.returncode == 0, result.stderr
    first_frame, after_watchers = result.stdout.strip().splitlines()[-1].split("] [")
    assert first_frame == "[", f"imported before the first frame was painted: {first_frame}"
    assert "watchdog" in after_watchers
