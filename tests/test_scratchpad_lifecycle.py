"""No pad outlives the app: not when the app is killed, not when it exits without closing its pads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from anton_tui.scratchpad import process as pad_process
from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc to watch processes")

REPO = Path(__file__).resolve().parents[1]


def process_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # gone before, or while, its stat file was read
        return False
    return state not in ("Z", "X")


def wait_until_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if process_alive(pid)]
        if not alive:
            return []
        time.sleep(0.05)
    return [pid for pid in pids if process_alive(pid)]


APP = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager

    async def main(mode):
        pads = ScratchpadManager(Path.cwd(), Path.cwd() / "venvs", ScratchpadLimits(memory_limit_mb=None))
        pad = await pads.get_or_create("main")
        if mode == "busy":
            # the pad is in the middle of a cell that also started a subprocess
            asyncio.get_running_loop().create_task(pad.execute(
                "import subprocess, time\\n"
                "child = subprocess.Popen(['sleep', '120'])\\n"
                "print(child.pid, flush=True)\\n"
                "time.sleep(120)", on_event=lambda e: getattr(e, "text", None) and print(
                    "GRANDCHILD", e.text.strip(), flush=True)))
            await pad.start()
            print("PAD", pad.pid, flush=True)
            await asyncio.sleep(120)
        else:
            await pad.execute("x = 1")
            print("PAD", pad.pid, flush=True)
            # exits without close_all

    asyncio.run(main(sys.argv[1]))
    """
)


def start_app(tmp_path: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", APP, mode], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
    )


def read_pids(app: subprocess.Popen[str], labels: set[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    assert app.stdout is not None
    deadline = time.monotonic() + 20
    while labels - set(found) and time.monotonic() < deadline:
        line = app.stdout.readline()
        if not line:
            break
        label, _, value = line.strip().partition(" ")
        if label in labels:
            found[label] = int(value)
    assert set(found) == labels, f"app printed only {found}"
    return found


def test_a_killed_app_takes_its_busy_pads_and_their_subprocesses_along(tmp_path: Path) -> None:
    app = start_app(tmp_path, "busy")
    try:
        pids = read_pids(app, {"PAD", "GRANDCHILD"})
        assert process_alive(pids["PAD"]) and process_alive(pids["GRANDCHILD"])
        app.send_signal(signal.SIGKILL)
        app.wait(5)
        assert wait_until_gone(list(pids.values()), 5) == []
    finally:
        app.kill()
        app.wait(5)


def test_an_app_that_exits_without_closing_leaves_no_pad(tmp_path: Path) -> None:
    app = start_app(tmp_path, "idle")
    try:
        pids = read_pids(app, {"PAD"})
        app.wait(20)
        assert wait_until_gone([pids["PAD"]], 5) == []
    finally:
        app.kill()
        app.wait(5)


async def test_the_exit_safety_net_kills_live_pads(tmp_path: Path) -> None:
    pads = ScratchpadManager(tmp_path, tmp_path / "venvs", ScratchpadLimits(memory_limit_mb=None))
    try:
        pad = await pads.get_or_create("main")
        await pad.start()
        pid = pad.pid
        assert len(pad_process._live) == 1
        pad_process._stop_leftover_pads()
        assert wait_until_gone([pid], 3) == []
    finally:
        await pads.close_all()
    assert not pad_process._live
