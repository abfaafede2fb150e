"""Processes that write one lessons.md at the same time, for the race and crash tests and `bench_memory_race`.

`anton_append` appends exactly as anton-agent 2.26.10 appends a lesson (`Hippocampus._encode_with_lock`, append
mode): open the file with ``"a"``, take `fcntl.flock(LOCK_EX)` on that handle, write the line, flush, unlock. The
rewriters are ours: they edit or delete entries in a loop, as the inspector's edit and delete and compaction do.
Run one as ``python -m tests.race_workers append|rewrite ...`` (see `main`).
"""

from __future__ import annotations

import fcntl
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANTON_LINE = "- anton lesson {tag} {n} <!-- ts:2026-11-25 -->\n"
SEED = "seed lesson that our side keeps editing"


def anton_append(path: Path, tag: str, count: int, pause: float = 0.0) -> None:
    """Append `count` lessons the way anton-agent does, one open/lock/write/unlock per lesson."""
    for n in range(count):
        with open(path, "a", encoding="utf-8") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                handle.write(ANTON_LINE.format(tag=tag, n=n))
                handle.flush()
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        if pause:
            time.sleep(random.uniform(0, pause))


def anton_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- anton lesson ")]


def seed(folder: Path, rewriters: int) -> None:
    """A lessons.md with one entry per rewriter for it to edit (and delete and put back)."""
    from anton_tui.memory.engrams.hippocampus import Hippocampus

    hc = Hippocampus(folder)
    for worker in range(rewriters):
        hc.encode_lesson(f"{SEED} {worker} v0")


def rewrite_until(folder: Path, worker: int, stop: Path, ready: Path) -> int:
    """Edit, delete and re-add this worker's own entry until `stop` exists; returns how many rewrites were done."""
    from anton_tui.memory.engrams.hippocampus import Hippocampus

    hc = Hippocampus(folder)
    done = 0
    while not stop.exists():
        if done == 1:
            ready.touch()  # warmed up: the next rewrites are as fast as they get
        mine = [e for e in hc.list_entries("lessons") if e.text.startswith(f"{SEED} {worker} ")]
        if not mine:
            hc.encode_lesson(f"{SEED} {worker} v{done}")
        elif done % 3 == 2:
            hc.delete_entry("lessons", mine[0].id)
        else:
            hc.update_entry("lessons", mine[0].id, f"{SEED} {worker} v{done}")
        done += 1
    return done


def version_text(version: int, lines: int) -> str:
    """One whole-file state for the crash test: `lines` fixed lessons, then one that names the version."""
    day = time.strftime("%Y-%m-%d")
    body = "".join(f"- entry {i} of the crash test <!-- ts:{day} -->\n" for i in range(lines))
    return f"# Lessons\n{body}- end of version {version} <!-- ts:{day} -->\n"


def _version_of(text: str) -> int:
    tail = text.rstrip("\n").rsplit("\n", 1)[-1]
    return int(tail.split()[4]) if tail.startswith("- end of version ") else -1


def is_whole_version(text: str, lines: int) -> bool:
    """True when `text` is exactly one `version_text` (nothing cut off, nothing of two writes mixed)."""
    version = _version_of(text)
    return version >= 0 and text == version_text(version, lines)


def rewrite_versions_forever(folder: Path, lines: int, ready: Path) -> None:
    """Edit the last lesson to name the next version, again and again (until killed); each edit rewrites the file."""
    from anton_tui.memory.engrams.engram import entry_id
    from anton_tui.memory.engrams.hippocampus import Hippocampus

    hc = Hippocampus(folder)
    version = _version_of((folder / "lessons.md").read_text())
    ready.touch()
    while True:
        hc.update_entry("lessons", entry_id(f"end of version {version}"), f"end of version {version + 1}")
        version += 1


def _spawn(*args: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.race_workers", *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )


def _wait_for(paths: list[Path], timeout: float = 60.0, alive=lambda: True) -> None:
    deadline = time.monotonic() + timeout
    while not all(path.exists() for path in paths):
        if time.monotonic() > deadline or not alive():
            raise TimeoutError(f"workers did not start: {[str(p) for p in paths if not p.exists()]}")
        time.sleep(0.01)


def race(folder: Path, appenders: int, rewriters: int, lessons: int = 200, pause: float = 0.004) -> dict[str, int]:
    """`appenders` Anton processes append `lessons` lessons in all while `rewriters` of ours rewrite the file.

    Returns how many Anton lessons were tried, how many are missing at the end, how many appear twice, and how
    many rewrites our side did meanwhile.
    """
    folder.mkdir(parents=True, exist_ok=True)
    seed(folder, rewriters)
    stop = folder / "stop"
    ready = [folder / f"ready-{worker}" for worker in range(rewriters)]
    ours = [_spawn("rewrite", folder, worker, stop, ready[worker]) for worker in range(rewriters)]
    try:
        _wait_for(ready)
        each = lessons // appenders
        wait = pause * appenders  # each appender pauses up to this long between lessons: ~0.4 s of appending in all
        theirs = [_spawn("append", folder / "lessons.md", f"a{n}", each, wait) for n in range(appenders)]
        for process in theirs:
            process.wait(timeout=120)
    finally:
        stop.touch()
        rewrites = sum(int((process.communicate(timeout=120)[0] or "0").strip() or 0) for process in ours)
    found = anton_lines((folder / "lessons.md").read_text())
    tried = each * appenders
    return {"tried": tried, "lost": tried - len(set(found)), "doubled": len(found) - len(set(found)),
            "rewrites": rewrites}


def leftovers(folder: Path) -> list[str]:
    """Temporary and carry-over files a writer left next to lessons.md."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".lessons.md."))


def crash_trials(folder: Path, kills: int, lines: int = 2000, seed_: int = 0, window: float = 0.03) -> dict[str, int]:
    """Kill -9 a process that rewrites lessons.md over and over, `kills` times, at random moments.

    After each kill the file must hold one whole version. Returns the partial files seen, the temporary files found
    right after the kills (summed), and those still there after our next write.
    """
    import multiprocessing
    import signal

    from anton_tui.memory.engrams.hippocampus import Hippocampus
    from anton_tui.redact import preload

    preload()  # the forked rewriters inherit the secret patterns instead of each importing them again
    rng = random.Random(seed_)
    context = multiprocessing.get_context("fork")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lessons.md"
    path.write_text(version_text(0, lines))
    partial = seen = 0
    first = _version_of(path.read_text())
    for _ in range(kills):
        ready = folder / "ready"
        ready.unlink(missing_ok=True)
        process = context.Process(target=rewrite_versions_forever, args=(folder, lines, ready))
        process.start()
        _wait_for([ready], alive=process.is_alive)
        time.sleep(rng.uniform(0, window))
        os.kill(process.pid, signal.SIGKILL)
        process.join()
        partial += not is_whole_version(path.read_text(), lines)
        seen += len(leftovers(folder))
    rewrites = _version_of(path.read_text()) - first
    Hippocampus(folder).encode_lesson("a lesson written after the last kill")
    return {"kills": kills, "partial": partial, "temp_seen": seen, "temp_left": len(leftovers(folder)),
            "rewrites": rewrites}


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "append":
        path, tag, count = Path(args[0]), args[1], int(args[2])
        anton_append(path, tag, count, float(args[3]) if len(args) > 3 else 0.0)
    elif command == "rewrite":
        print(rewrite_until(Path(args[0]), int(args[1]), Path(args[2]), Path(args[3])), flush=True)
    elif command == "versions":
        rewrite_versions_forever(Path(args[0]), int(args[1]), Path(args[2]))
    else:
        raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
