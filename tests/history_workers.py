"""Processes that write one memory scope while its history records them, for the history's concurrency and crash
tests: ``python -m tests.history_workers write|forever HOME PROJECT TAG [COUNT]``.

`write` saves COUNT lessons to the global memory (the scope every project shares), waits until each is recorded and
prints what the recorder reported; `forever` saves lessons until it is killed (a test kills it with SIGKILL at a
random moment, often in the middle of a commit)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path


def stores(home: Path, project: Path):  # noqa: ANN201 (MemoryStores, imported here to keep the module light)
    from anton_tui.memory.stores import MemoryStores
    from anton_tui.paths import AntonPaths

    project.mkdir(parents=True, exist_ok=True)
    return MemoryStores.from_paths(AntonPaths(home, project))


def main(argv: list[str]) -> int:
    action, home, project, tag = argv[0], Path(argv[1]), Path(argv[2]), argv[3]
    memory = stores(home, project)
    memory.recorder.start()
    counter = range(int(argv[4])) if action == "write" else itertools.count()
    for n in counter:
        memory.global_hc.encode_lesson(f"{tag} lesson number {n}")
    flushed = memory.recorder.flush(120)
    print(f"flushed={flushed} problems={memory.recorder.problems}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
