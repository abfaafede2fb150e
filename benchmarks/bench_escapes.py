"""How many processes a cell can leave behind: four ways of starting a child that tries to outlive its pad, each tried
after the pad is closed and after the app holding the pad is killed with SIGKILL. Prints survivors / tried.

Linux only (it looks for survivors in /proc). Run alone with ``python -m benchmarks.bench_escapes`` or
``python -m benchmarks --only escapes``. Every survivor found is killed before the script ends.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROUNDS = 3
SETTLE_SECONDS = 3.0

# Each cell starts `sleep` with MARK in its environment, so /proc/<pid>/environ shows who is ours.
TECHNIQUES = {
    "plain child": """
        import os, subprocess
        subprocess.Popen(['sleep', '300'], env={**os.environ, 'ESCAPE_MARK': MARK})
    """,
    "setsid child": """
        import os, subprocess
        subprocess.Popen(['setsid', 'sleep', '300'], env={**os.environ, 'ESCAPE_MARK': MARK})
    """,
    "double fork": """
        import os, shutil
        sleep = shutil.which('sleep')
        middle = os.fork()
        if middle == 0:
            if os.fork() == 0:
                os.execve(sleep, ['sleep', '300'], {**os.environ, 'ESCAPE_MARK': MARK})
            os._exit(0)
        os.waitpid(middle, 0)
    """,
    "setsid + daemonize": """
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
                os.execve(sleep, ['sleep', '300'], {**os.environ, 'ESCAPE_MARK': MARK})
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
    print("RAN", cell.status, flush=True)
    await asyncio.sleep(300)

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
    """Live processes whose environment holds `mark`."""
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
    return predicate()


def survivors_after(mark: str) -> list[int]:
    """The marked processes still alive once the pad had SETTLE_SECONDS to clean up; they are then killed."""
    wait_for(lambda: not marked(mark), SETTLE_SECONDS)
    alive = marked(mark)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return alive


async def try_closed_pad(workdir: Path, technique: str) -> bool:
    """True when the child outlived `close_all`."""
    from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager

    mark = uuid.uuid4().hex
    pads = ScratchpadManager(workdir, workdir / "venvs", ScratchpadLimits(memory_limit_mb=None))
    try:
        pad = await pads.get_or_create("main")
        cell = await pad.execute(cell_code(technique, mark))
        if cell.status != "ok" or not wait_for(lambda: sleeping(mark), 5):
            raise RuntimeError(f"{technique}: the child did not start ({cell.status}: {cell.error})")
    finally:
        await pads.close_all()
    return bool(survivors_after(mark))


def try_killed_app(workdir: Path, technique: str) -> bool:
    """True when the child outlived a SIGKILL of the app that owned its pad."""
    mark = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    app = subprocess.Popen([sys.executable, "-c", APP], cwd=workdir, env=env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        assert app.stdin is not None and app.stdout is not None
        app.stdin.write(cell_code(technique, mark))
        app.stdin.close()
        line = app.stdout.readline()
        if not line.startswith("RAN ok") or not wait_for(lambda: sleeping(mark), 5):
            raise RuntimeError(f"{technique}: the child did not start ({line.strip()!r})")
        app.send_signal(signal.SIGKILL)
        app.wait(10)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(10)
    return bool(survivors_after(mark))


async def run_trials(workdir: Path, rounds: int = ROUNDS) -> dict[tuple[str, str], tuple[int, int]]:
    """{(technique, way): (survived, tried)} for both ways."""
    results: dict[tuple[str, str], tuple[int, int]] = {}
    for technique in TECHNIQUES:
        closed = sum([await try_closed_pad(workdir, technique) for _ in range(rounds)])
        results[(technique, "pad closed")] = (closed, rounds)
        killed = sum(await asyncio.to_thread(lambda: [try_killed_app(workdir, technique) for _ in range(rounds)]))
        results[(technique, "app killed")] = (killed, rounds)
    return results


def main() -> None:
    if not sys.platform.startswith("linux"):
        print("escapes: skipped (needs Linux /proc)")
        return
    with tempfile.TemporaryDirectory(prefix="anton-bench-escapes-") as scratch:
        results = asyncio.run(run_trials(Path(scratch)))
    for (technique, way), (survived, tried) in results.items():
        print(f"escapes: {technique:<20} {way:<11} {survived} survived / {tried} tried", flush=True)
    survived = sum(s for s, _ in results.values())
    tried = sum(t for _, t in results.values())
    print(f"escapes: total {survived} survived / {tried} tried (4 techniques x 2 ways x {ROUNDS} rounds)", flush=True)


if __name__ == "__main__":
    main()
