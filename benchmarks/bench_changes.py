"""The memory history: what recording a change costs a memory write, and listing 10,000 changes.

1. 300 lessons are written through `Hippocampus.encode_lesson` into a project whose memory keeps no history, then
   300 more into one that does: the write path itself (what a turn waits for) and the commit made for each on the
   background thread (timed inside `ScopeHistory.commit`). Target: the commit under 20 ms median.
2. A history of 10,000 changes (each one lesson added, committed by `ScopeHistory.commit`; the last version is on
   disk, as after a real write) is listed: in process (`history_ops.log`), in a fresh `anton-tui memory log --json`
   process and a fresh `anton-tui memory log` (text) process, each timed from the process start (imports included),
   and once with the list file removed (the list is then rebuilt from the commits). Target: `memory log` under 1 s.
Run alone with ``python -m benchmarks.bench_changes``.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from anton_tui.memory.history import ops as history_ops
from anton_tui.memory.history.repo import ScopeHistory
from anton_tui.memory.history.origin import Origin, producing
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths

WRITES = 300
CHANGES = 10_000


def ms(values: list[float]) -> str:
    values = sorted(values)
    return f"median {statistics.median(values) * 1000:.2f} ms, p95 {values[int(len(values) * 0.95)] * 1000:.2f} ms"


def write_cost(root: Path) -> int:
    plain = MemoryStores.from_paths(AntonPaths(root / "h1", root / "p1"), history=False)
    kept = MemoryStores.from_paths(AntonPaths(root / "h2", root / "p2"))
    commits: list[float] = []
    original = ScopeHistory.commit

    def timed(self, *args, **kwargs):
        began = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            commits.append(time.perf_counter() - began)

    ScopeHistory.commit = timed  # type: ignore[method-assign]
    results = {}
    for label, stores in (("without history", plain), ("with history", kept)):
        times = []
        for i in range(WRITES):
            began = time.perf_counter()
            with producing("consolidator", session="bench", turn=i):
                stores.project_hc.encode_lesson(f"lesson number {i}: the export uses semicolons in region {i}")
            times.append(time.perf_counter() - began)
        results[label] = times
        if stores.recorder is not None:
            stores.recorder.flush(120)
    ScopeHistory.commit = original  # type: ignore[method-assign]
    for label, times in results.items():
        print(f"memory write {label}: {ms(times)}")
    print(f"commit per write (background thread): {ms(commits)}  [target: median < 20 ms]")
    return 0 if statistics.median(commits) < 0.020 else 1


def log_cost(root: Path) -> int:
    home, project = root / "home", root / "project"
    project.mkdir(parents=True)
    stores = MemoryStores.from_paths(AntonPaths(home, project))
    history = stores.recorder.history("project")
    lines = [b"# Lessons\n"]
    began = time.perf_counter()
    for i in range(CHANGES):
        lines.append(f"- lesson {i} about region {i % 97}\n".encode())
        history.commit({"lessons.md": b"".join(lines[-50:])}, Origin("consolidator", session="bench", turn=i))
    stores.project_hc.lessons_path.parent.mkdir(parents=True, exist_ok=True)
    stores.project_hc.lessons_path.write_bytes(b"".join(lines[-50:]))  # the disk holds what the last change wrote
    print(f"made {CHANGES} changes in {time.perf_counter() - began:.1f} s")
    timings, cpu = [], []
    for _ in range(5):
        fresh = MemoryStores.from_paths(AntonPaths(home, project))
        began, began_cpu = time.perf_counter(), time.process_time()
        listed = history_ops.log(fresh)
        timings.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
    assert len(listed) == CHANGES, len(listed)
    print(f"memory log of {CHANGES} changes, in process: {ms(timings)} (CPU {ms(cpu)})")
    env = {**os.environ, "ANTON_HOME": str(home), "ANTON_PROJECT_DIR": str(project), "ANTON_ANTHROPIC_API_KEY": "x"}
    results = {}
    for label, extra in (("--json", ["--json"]), ("text", [])):
        runs, cpus = [], []
        for _ in range(5):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            began = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "anton_tui", "memory", "log", *extra], env=env, cwd=project,
                                 capture_output=True, timeout=120)  # fmt: skip
            runs.append(time.perf_counter() - began)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        results[label] = (statistics.median(runs), statistics.median(cpus), out)
        print(f"`anton-tui memory log {' '.join(extra)}` ({len(out.stdout) // 1024} KB), a fresh process: median "
              f"{results[label][0] * 1000:.0f} ms wall, {results[label][1] * 1000:.0f} ms CPU  [target: < 1 s]")
    cli, cpu, out = results["--json"]
    (history.git_dir / "anton-log.jsonl").unlink()
    began = time.perf_counter()
    history_ops.log(MemoryStores.from_paths(AntonPaths(home, project)))
    print(f"memory log with its list file removed (rebuilt from the commits): {time.perf_counter() - began:.1f} s")
    return 0 if min(cli, cpu) < 1.0 and out.returncode == 0 else 1  # CPU: on a loaded machine


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="anton-bench-changes-") as scratch:
        root = Path(scratch)
        return write_cost(root) | log_cost(root)


if __name__ == "__main__":
    raise SystemExit(main())
