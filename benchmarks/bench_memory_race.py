"""Memory files shared with Anton under stress, and where secrets are taken out.

1. The rewrite race: anton-agent style appender processes add 200 lessons to lessons.md while our processes edit
   and delete entries in it (5 runs each of 1 + 1 and 4 + 4 processes); lessons lost / tried.
2. Kill -9 during rewrites: a process replacing a 0.5 MB lessons.md over and over is killed at random moments
   (`KILLS` times); whole-file check after each kill, temporary files found then and left after the next write.
3. What one rewrite costs, alone and with an appender waiting on the file.
4. Secret kinds against the places they could be written (lessons, rules, profile, the episode log, the model's view
   of a cell's output): each kind is written through the real path and looked for afterwards.

Everything runs in throw-away folders. Run alone with ``python -m benchmarks.bench_memory_race``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 5
KILLS = 200
KILL_LINES = 10_000  # about 0.5 MB per version of the file
KILL_WINDOW = 0.25  # seconds: each kill lands at a random moment within this long after the rewriter is ready
REWRITES = 200


def race_runs(scratch: Path) -> list[str]:
    from tests.race_workers import race

    lines = []
    for appenders, rewriters in ((1, 1), (4, 4)):
        results = [race(scratch / f"race-{appenders}-{run}", appenders, rewriters) for run in range(RUNS)]
        lost = "  ".join(f"{r['lost']}/{r['tried']}" for r in results)
        doubled = sum(r["doubled"] for r in results)
        rewrites = statistics.median(r["rewrites"] for r in results)
        lines.append(
            f"race {appenders} Anton appender(s) + {rewriters} rewriter(s), {RUNS} runs: lost/tried {lost}; "
            f"doubled {doubled}; median rewrites during a run {rewrites:.0f}"
        )
    return lines


def kill_runs(scratch: Path) -> list[str]:
    from tests.race_workers import crash_trials

    began = time.perf_counter()
    result = crash_trials(scratch / "kills", KILLS, KILL_LINES, seed_=13, window=KILL_WINDOW)
    return [
        f"kill -9 during rewrites of a {KILL_LINES}-line lessons.md: partial files {result['partial']}/{result['kills']}; "
        f"temporary files seen right after a kill {result['temp_seen']} (summed over all kills, each removed by the "
        f"next writer); left after the last write {result['temp_left']}; rewrites completed {result['rewrites']} "
        f"({time.perf_counter() - began:.0f} s)"
    ]


def rewrite_cost(scratch: Path) -> list[str]:
    from anton_tui.memory.engrams.hippocampus import Hippocampus
    from tests.race_workers import ANTON_LINE

    folder = scratch / "cost"
    folder.mkdir()
    path = folder / "lessons.md"
    path.write_text("# Lessons\n" + "".join(ANTON_LINE.format(tag="old", n=n) for n in range(5000)))
    hc = Hippocampus(folder)
    hc.encode_lesson("the entry we edit v0")

    def one(i: int) -> float:
        target = next(e for e in hc.list_entries("lessons") if e.text.startswith("the entry we edit"))
        began = time.perf_counter()
        hc.update_entry("lessons", target.id, f"the entry we edit v{i}")
        return time.perf_counter() - began

    alone = [one(i) for i in range(REWRITES)]
    script = (  # as anton-agent appends: open, lock, write, flush, unlock, close
        "import fcntl, sys, time\n"
        "with open(sys.argv[1], 'a') as f:\n"
        "    print('open', flush=True)\n"
        "    fcntl.flock(f, fcntl.LOCK_EX)\n"
        "    f.write(sys.argv[2]); f.flush()\n"
        "    fcntl.flock(f, fcntl.LOCK_UN)\n"
        "time.sleep(1)\n"  # the process lives on after closing the file, as Anton does
    )
    from anton_tui.memory.files import replace

    settle: list[float] = []
    writers_gone = replace._writers_gone

    def timed_wait(fd: int) -> bool:  # how long the rewrite waits for the appender to finish with the old file
        began = time.perf_counter()
        try:
            return writers_gone(fd)
        finally:
            settle.append(time.perf_counter() - began)

    replace._writers_gone = timed_wait
    waiting, appenders = [], []
    for i in range(20):
        spent = {}

        def change(parsed, i=i):
            began = time.perf_counter()  # an Anton append opens the file now and waits for our lock on it
            appender = subprocess.Popen(
                [sys.executable, "-c", script, str(path), ANTON_LINE.format(tag="late", n=i)],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            appender.stdout.readline()
            time.sleep(0.05)
            appenders.append(appender)
            spent["setup"] = time.perf_counter() - began
            return [line.replace("the entry we edit", "the entry we edit again", 1) for line in parsed.lines]

        began = time.perf_counter()
        hc.rewrite_file("lessons", change)
        waiting.append(time.perf_counter() - began - spent["setup"])
    replace._writers_gone = writers_gone
    for appender in appenders:
        appender.wait()
    settle = settle[-20:]
    carried = sum(1 for line in path.read_text().splitlines() if "anton lesson late" in line)
    return [
        f"rewrite of a 5,000-lesson file: median {statistics.median(alone) * 1000:.1f} ms, "
        f"p95 {sorted(alone)[int(len(alone) * 0.95)] * 1000:.1f} ms ({REWRITES} rewrites)",
        f"rewrite with an Anton append waiting on the file: median {statistics.median(waiting) * 1000:.1f} ms, of "
        f"which waiting for the appender to finish with the old file {statistics.median(settle) * 1000:.1f} ms "
        f"(max {max(settle) * 1000:.1f} ms); appends carried into the new file {carried}/20",
    ]


def secrets_matrix(scratch: Path) -> list[str]:
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.memory.engrams.hippocampus import Hippocampus
    from anton_tui.redact import Redactor, scrub_cell
    from anton_tui.scratchpad.cell import Cell
    from anton_tui.scratchpad.formatting import format_cell_result
    from tests.test_redact import SHAPES

    samples = dict(SHAPES)
    samples["known value (DS_ password)"] = "hunter2hunter2"
    redactor = Redactor(environ={"DS_POSTGRES_PROD__PASSWORD": "hunter2hunter2"})
    places = ("lessons", "rules", "profile", "episodes", "model view of a cell")
    rows = []
    began = time.perf_counter()
    for n, (kind, secret) in enumerate(samples.items()):
        home, project = scratch / f"s{n}" / "home", scratch / f"s{n}" / "project"
        episodes = EpisodicMemory(project / "episodes")
        episodes.start_session()
        cortex = Cortex(Hippocampus(home, scope="global"), Hippocampus(project), episodic=episodes)
        cortex.redactor = redactor
        cortex.encode([
            Engram(f"lesson with {secret} inside", "lesson", "project"),
            Engram(f"rule with {secret} inside", "always", "project"),
            Engram(f"Key: {secret}", "profile", "global"),
        ])
        episodes.log_turn(1, "user", redactor(f"my key is {secret}"))  # as the session logs every turn
        view = format_cell_result(scrub_cell(Cell(code="print(key)", stdout=f"key {secret}\n"), redactor)[0])
        texts = {
            "lessons": (project / "lessons.md").read_text(),
            "rules": (project / "rules.md").read_text(),
            "profile": (home / "profile.md").read_text(),
            "episodes": "".join(p.read_text() for p in (project / "episodes").glob("*.jsonl")),
            "model view of a cell": view,
        }
        verdict = ["removed" if secret not in texts[p] and json.dumps(secret)[1:-1] not in texts[p] else "KEPT"
                   for p in places]
        rows.append(f"  {kind:32} " + " ".join(f"{v:>10}" for v in verdict))
    header = f"  {'secret kind':32} " + " ".join(f"{p.split()[0]:>10}" for p in places)
    kept = sum(row.count("KEPT") for row in rows)
    return [
        f"secret kinds x places ({len(samples)} kinds, {len(places)} places; 'model' = model view of a cell's "
        f"output): {len(samples) * len(places) - kept} removed, {kept} kept ({time.perf_counter() - began:.1f} s)",
        header,
        *rows,
    ]


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    with tempfile.TemporaryDirectory(prefix="anton-bench-race-") as scratch:
        for step in (race_runs, kill_runs, rewrite_cost, secrets_matrix):
            folder = Path(scratch) / step.__name__
            folder.mkdir()
            for line in step(folder):
                print(line, flush=True)


if __name__ == "__main__":
    main()
