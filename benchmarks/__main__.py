"""Run every `benchmarks/bench_*.py` module in turn, each in a fresh interpreter (as the app always starts in one),
inside a throw-away ANTON_HOME and project folder.

Usage: ``python -m benchmarks [--scale N] [name ...]`` or ``python -m benchmarks --only name[,name]`` (for example
``python -m benchmarks --only race``); no names runs them all. ``--scale 10`` makes the memory benchmark seed ten
times as much (a million episode lines, 50,000 lessons, 10,000 skills); ``make bench ARGS="--scale 10"`` passes it on.
The app's modules are compiled to bytecode first, as an installed app has them.
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def bench_modules(only: list[str]) -> list[str]:
    """The benchmark modules to run: all, or those named (``race`` names ``bench_memory_race`` by its last word)."""
    names = sorted(path.stem for path in Path(__file__).parent.glob("bench_*.py"))
    wanted = [name.removeprefix("bench_") for name in only]
    return [m for m in names if not wanted or any(m == f"bench_{w}" or m.endswith(f"_{w}") for w in wanted)]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--scale" in args:
        at = args.index("--scale")
        os.environ["ANTON_BENCH_SCALE"] = args[at + 1]
        del args[at : at + 2]
    wanted = [name for arg in args if arg != "--only" for name in arg.split(",") if name]
    names = bench_modules(wanted)
    if not names:
        print("no benchmark matches", file=sys.stderr)
        return 2
    # An installed app runs from bytecode written once; with PYTHONDONTWRITEBYTECODE set and none written yet, every
    # timed process would compile the app's modules again (slower starts, a bigger peak).
    compileall.compile_dir(Path(__file__).parent.parent / "anton_tui", quiet=1)
    failed = []
    with tempfile.TemporaryDirectory(prefix="anton-bench-home-") as scratch:
        os.environ["ANTON_HOME"] = str(Path(scratch) / "home")
        os.environ["ANTON_PROJECT_DIR"] = str(Path(scratch) / "project")
        for folder in ("home", "project"):
            (Path(scratch) / folder).mkdir()
        for name in names:
            print(f"== {name}", flush=True)
            began = time.perf_counter()
            if subprocess.run([sys.executable, "-m", f"benchmarks.{name}"], cwd=Path(__file__).parent.parent).returncode:
                failed.append(name)
            print(f"{name} total: {time.perf_counter() - began:.1f} s", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
