"""The `@` picker's file list: walking a big workspace, the cached listing, and ranking per keystroke.

A workspace of 19,500 files in 390 folders (plus an ignored `node_modules/` of 19,500 more, which must cost
nothing) is walked by `list_files`; the cached `WorkspaceFiles.listing` is read again; then `rank` runs for the
queries a user types letter by letter. Targets: a walk under 1 s, a ranking under 100 ms median (it runs in a
thread; the picker shows the latest answer). Run alone with ``python -m benchmarks.bench_workspace``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from anton_tui.agent.workspace_files import WorkspaceFiles, list_files, rank

FOLDERS, PER_FOLDER = 390, 50
QUERY = "report/monthly_sales"


def seed(root: Path) -> None:
    for folder in range(FOLDERS):
        for base in ("src", "node_modules"):
            path = root / base / f"pkg{folder:03}"
            path.mkdir(parents=True)
            for index in range(PER_FOLDER):
                (path / f"module_{index:02}.py").touch()
    (root / "report").mkdir()
    (root / "report" / "monthly_sales.py").touch()
    (root / ".gitignore").write_text("node_modules/\n", encoding="utf-8")


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        seed(root)
        began = time.perf_counter()
        listing = list_files(root)
        walk = time.perf_counter() - began
        print(f"walk: {len(listing.files):,} files (capped: {listing.capped}) in {walk * 1000:.0f} ms"
              f" (target < 1000 ms)")  # fmt: skip
        cached = WorkspaceFiles(root)
        cached.listing()
        began = time.perf_counter()
        cached.listing()
        print(f"cached listing: {(time.perf_counter() - began) * 1e6:.0f} µs")
        times = []
        for end in range(1, len(QUERY) + 1):
            began = time.perf_counter()
            found = rank(QUERY[:end], listing.files)
            times.append(time.perf_counter() - began)
        assert found[0] == "report/monthly_sales.py", found[:3]
        print(f"rank per keystroke ({len(QUERY)} queries): median {statistics.median(times) * 1000:.0f} ms, "
              f"max {max(times) * 1000:.0f} ms (target median < 100 ms)")


if __name__ == "__main__":
    main()
