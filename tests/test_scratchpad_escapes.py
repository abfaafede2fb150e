"""A pad owns everything its cells start: a child that leaves the pad's session or process group, or is orphaned by a
double fork, still ends when the pad closes and when the app holding the pad is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc to find survivors")

REPO = Path(__file__).resolve().parents[1]

TECHNIQUES = {
    "plain child": """
        import os, subprocess
        subprocess.Popen(['sleep', '120'], env={**os.environ, 'ESCAPE_MARK': MARK})
    """,
    "setsid child": """
        import os, subprocess
        subprocess.Popen(['setsid', 'sleep', '120'], env={**os.environ, 'ESCAPE_MARK': MARK})
    """,
    "double fork": """
        import os, shutil
        sleep = shutil.which('sleep')
        middle = os.fork()
        if middle == 0:
            if os.fork() == 0:
                os.execve(sleep, ['sleep', '120'], {**os.environ, 'ESCAPE_MARK': MARK})
            os._exit(0)
        os.waitpid(middle, 0)
    """,
    "setsid and daemonize": """
        import os, shutil, signal
        sleep = shutil.which('sleep')
        middle = os.fork()
        if middle == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                os.chdir('/')
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.execve(sleep, ['sleep', '120'], {**os.environ, 'ESCAPE_MARK': MARK})
            os._exit(0)
        os.waitpid(middle, 0)
    """,
}

APP = """
import asyncio, sys
from pathlib import Path
from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager

async def main():
    pads = ScratchpadManager(Path.cwd(), Path.cwd() / "venvs", ScratchpadLimits(memory_limit_mb=None))
    pad = await pads.get_or_create("main")
    cell = await pad.execute(sys.stdin.read())
    print("RAN", cell.status, cell.error, flush=True)
    await asyncio.sleep(120)

asyncio.run(main())
"""


def cell_code(technique: str, mark: str) -> str:
    return f"MARK = {mark!r}\n" + textwrap.dedent(TECHNIQUES[technique])


def sleeping(mark: str) -> bool:
    """Whether the marked child has reached its final form (`sleep`, past any setsid or fork on the way)."""
    for pid in marked(mark):
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() == "sleep":
                    return True
        except OSError:
            continue
    return False


def marked(mark: str) -> list[int]:
    needle = f"ESCAPE_MARK={mark}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if needle not in environ.read():
                    continue
            with open(f"/proc/{entry}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    continue
        except OSError:
            continue
        found.append(int(entry))
    return found


def wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


@pytest.fixture
def mark():
    value = uuid.uuid4().hex
    yield value
    for pid in marked(value):  # never leave a survivor behind, even when the test fails
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("technique", list(TECHNIQUES))
async def test_nothing_a_cell_started_outlives_the_closed_pad(technique: str, mark: str, tmp_path: Path) -> None:
    pads = ScratchpadManager(tmp_path, tmp_path / "venvs", ScratchpadLimits(memory_limit_mb=None))
    try:
        pad = await pads.get_or_create("main")
        cell = await pad.execute(cell_code(technique, mark))
        assert cell.status == "ok", cell.error
        assert wait_for(lambda: sleeping(mark), 5), "the child never started"
    finally:
        await pads.close_all()
    assert wait_for(lambda: not marked(mark), 3), f"{technique}: {marked(mark)} still running after the pad closed"


@pytest.mark.parametrize("technique", list(TECHNIQUES))
def test_nothing_a_cell_started_outlives_a_killed_app(technique: str, mark: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    app = subprocess.Popen([sys.executable, "-c", APP], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        assert app.stdin is not None and app.stdout is not None
        app.stdin.write(cell_code(technique, mark))
        app.stdin.close()
        assert app.stdout.readline().startswith("RAN ok")
        assert wait_for(lambda: sleeping(mark), 5), "the child never started"
        app.send_signal(signal.SIGKILL)
        app.wait(10)
        assert wait_for(lambda: not marked(mark), 3), f"{technique}: {marked(mark)} outlived the killed app"
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(10)
