"""How fast memory answers when it is big: prompt context, skill list, episode recall and its index, and the app's
memory use, on a well-used home.

Seeds a throw-away home and project (never the user's own, see `memory_seed`) and times the calls the app makes on
every turn. ``--scale 10`` (or ``ANTON_BENCH_SCALE=10``) seeds ten times as much: a million episode lines, 50,000
lessons and 10,000 skills. Cold figures (a first recall, a build) are medians of ``ANTON_BENCH_REPEAT`` runs
(default 3), warm ones medians of many calls. A first call's floor is timed after it; what both read first (each
skill's one file) is read once, untimed, before either, so that the floor does not find warm what the call found cold.

With ``ANTON_AGENT_PYTHON`` set to an interpreter that has anton-agent installed (in a venv of its own, never this
project's), the same recalls are timed with Anton's own `EpisodicMemory` on the same files, alternating with ours,
for reference. Run alone with ``python -m benchmarks.bench_memory [--scale N]``.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.memory_seed import RARE_WORD, TYPICAL_QUERIES, Scale, seed

REPO = Path(__file__).resolve().parent.parent
WARM_REPEATS = 30
INDEX_NAME = ".recall-index.sqlite3"
TURNS_NAME = ".recall-index.turns"
WORD_IN_A_THIRD = 30  # the Zipf rank of a word held by about a third of the turns (ranked by BM25, not tied)


def _ms(call: Callable[[], object]) -> float:
    began = time.perf_counter()
    call()
    return (time.perf_counter() - began) * 1000


def _warm_median(call: Callable[[], object], repeats: int = WARM_REPEATS) -> float:
    call()
    return statistics.median(_ms(call) for _ in range(repeats))


def report(name: str, value: float, target: float | None = None, unit: str = "ms") -> None:
    goal = f"target < {target:g} {unit}" if target is not None else "no target"
    verdict = " MISSED" if target is not None and value >= target else ""
    print(f"{name}: {value:,.2f} {unit} ({goal}){verdict}", flush=True)


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class PeakRss:
    """Samples this process's resident memory every 20 ms while the block runs."""

    def __enter__(self) -> PeakRss:
        self.idle = self.peak = rss_mb()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._done.wait(0.02):
            self.peak = max(self.peak, rss_mb())

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb())


def _remove_index(folder: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{folder / INDEX_NAME}{suffix}").unlink(missing_ok=True)
    shutil.rmtree(folder / TURNS_NAME, ignore_errors=True)


def index_megabytes(folder: Path) -> float:
    turns = sum(path.stat().st_size for path in (folder / TURNS_NAME).rglob("*") if path.is_file())
    return ((folder / INDEX_NAME).stat().st_size + turns) / 1e6


def _wait_for_build(memory: object) -> None:
    index = memory.index
    builder = getattr(index, "_builder", None)
    if builder is not None:
        builder.join()
    index.refresh()


def recall_figures(folder: Path, common: str, repeats: int, third: str) -> dict[str, float]:
    from anton_tui.memory.episodes.store import EpisodicMemory

    figures: dict[str, list[float]] = {"first": [], "build": [], "build_rss": [], "ready": []}
    for _ in range(repeats):
        _remove_index(folder)
        gc.collect()
        memory = EpisodicMemory(folder)
        began = time.perf_counter()
        start_build = getattr(memory.index, "build_in_background", None)
        if start_build is not None:
            start_build()  # as the app's warm-up does right after start
        figures["first"].append(_ms(lambda: memory.recall(TYPICAL_QUERIES[0])))
        _wait_for_build(memory)
        figures["ready"].append(time.perf_counter() - began)
        memory.close()

        _remove_index(folder)
        build = build_in_fresh_process(folder)
        figures["build"].append(build["seconds"])
        figures["build_rss"].append(build["peak"] - build["idle"])
    memory = EpisodicMemory(folder)
    memory.recall("warm")
    result = {key: statistics.median(values) for key, values in figures.items()}
    result["warm_typical"], result["own_query"] = recall_beside_own_query(memory, TYPICAL_QUERIES)
    result["warm_common"] = _warm_median(lambda: memory.recall(common))
    result["warm_third"] = _warm_median(lambda: memory.recall(third))
    result["warm_rare"] = _warm_median(lambda: memory.recall(RARE_WORD))
    result["hits"] = len(memory.recall("coingecko"))
    result["size"] = index_megabytes(folder)
    memory.close()
    fresh = [first_recall_in_fresh_process(folder, TYPICAL_QUERIES[0]) for _ in range(repeats)]
    result["fresh_first"] = statistics.median(run["recall"] for run in fresh)
    result["fresh_floor"] = statistics.median(run["floor"] for run in fresh)
    return result


def recall_beside_own_query(memory: object, queries: list[str]) -> tuple[float, float]:
    """Warm medians, in milliseconds, of a recall of each query and of the index's own query for it (the ranked top
    20 turn keys for its words, nothing read back), the two timed one after the other for each query in turn, so
    that both meet the machine in the same state."""
    from anton_tui.memory.episodes.recall_rank import query_words

    index = memory.index  # type: ignore[attr-defined]
    searcher = index._turns
    memory.recall(queries[0])  # type: ignore[attr-defined]
    version = (index._reader.inode, index._reader.data_version)  # as the recall just asked its searcher for
    stems = [searcher.stems(query_words(query)) for query in queries]
    recalls: list[float] = []
    own: list[float] = []
    for round_ in range(WARM_REPEATS * 2 + len(queries)):
        query = round_ % len(queries)
        recalls.append(_ms(lambda: memory.recall(queries[query])))  # type: ignore[attr-defined]  # noqa: B023 (called at once)
        own.append(_ms(lambda: searcher.search(version, stems[query], 20)))  # noqa: B023 (called at once)
    skip = len(queries)  # each query once first, untimed in effect: its turns and postings read for the first time
    return statistics.median(recalls[skip:]), statistics.median(own[skip:])


_FRESH_SCRIPT = """
import json, sys, time
from pathlib import Path
folder, query = Path(sys.argv[1]), sys.argv[2]
if sys.argv[3] == "floor":  # the cheapest way to the same ranked keys: open both stores and run one query
    import sqlite3, tantivy
    from anton_tui.memory.episodes.turn_index import TOKENIZER, analyzer
    began = time.perf_counter()
    conn = sqlite3.connect(folder / ".recall-index.sqlite3")
    conn.execute("SELECT count(*) FROM files").fetchone()
    index = tantivy.Index.open(str(folder / ".recall-index.turns"))
    index.register_tokenizer(TOKENIZER, analyzer())
    query = tantivy.Query.term_query(index.schema, "own", analyzer().analyze(query)[0], "freq")
    index.searcher().search(query, 20, count=False)
else:  # with what the app's warm-up loads right after start (libraries, no file of this folder)
    from anton_tui.memory.episodes.index import preload
    from anton_tui.memory.episodes.store import EpisodicMemory
    preload()
    began = time.perf_counter()
    memory = EpisodicMemory(folder)
    memory.recall(query)
print(json.dumps((time.perf_counter() - began) * 1000))
"""


def first_recall_in_fresh_process(folder: Path, query: str) -> dict[str, float]:
    """The first recall of a new process with the index built (its modules and libraries loaded before the clock
    starts, as the app's warm-up loads them), and beside it the floor: opening the index and running one ranked query
    in a new process."""
    out = {}
    for name, mode in (("recall", "recall"), ("floor", "floor")):
        done = subprocess.run(
            [sys.executable, "-c", _FRESH_SCRIPT, str(folder), query, mode],
            cwd=REPO, capture_output=True, text=True, check=True,
        )  # fmt: skip
        out[name] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def skill_files_floor(root: Path) -> float:
    """The cheapest way to the listing's answer: list the skills folder and read each skill's one file (its SKILL.md,
    else its meta.json), in milliseconds."""
    began = time.perf_counter()
    with os.scandir(root) as found:
        for entry in found:
            for name in ("SKILL.md", "meta.json"):
                try:
                    with open(f"{entry.path}/{name}", "rb") as handle:
                        handle.read()
                    break
                except FileNotFoundError:
                    continue
    return (time.perf_counter() - began) * 1000


_PEAK_SCRIPT = """
import asyncio, json, sys
from pathlib import Path
home, project, which = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
if which == "anton":
    from anton.core.memory.cortex import Cortex
    from anton.core.memory.episodes import EpisodicMemory
    from anton.core.memory.hippocampus import Hippocampus
    from anton.core.memory.skills import SkillStore
    cortex = Cortex(Hippocampus(home / "memory"), Hippocampus(project / ".anton" / "memory"))
    asyncio.run(cortex.build_memory_context())
    skills = SkillStore(home / "skills")
else:
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.engrams.hippocampus import Hippocampus
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.memory.skills.store import SkillStore
    cortex = Cortex(Hippocampus(home / "memory", scope="global"), Hippocampus(project / ".anton" / "memory"))
    cortex.build_memory_context()
    skills = SkillStore(home / "skills", listing_snapshot=home / "cache" / "skill-listing.txt")  # (as the app's)
skills.list_summaries()
memory = EpisodicMemory(project / ".anton" / "episodes")
for query in json.loads(sys.argv[4]):
    memory.recall(query)
with open("/proc/self/status") as status:
    print(json.dumps(next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))))
"""


def engine_peak(python: str, home: Path, project: Path, which: str) -> float:
    """The peak resident memory of a fresh process of `which` engine ("ours" or "anton") that builds the memory
    context, lists the skills and recalls the typical queries on this home, in MB."""
    done = subprocess.run(
        [python, "-c", _PEAK_SCRIPT, str(home), str(project), which, json.dumps(TYPICAL_QUERIES)],
        cwd=REPO if which == "ours" else tempfile.gettempdir(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(done.stdout.strip().splitlines()[-1])


def subset(folder: Path, target: Path, lines: int) -> Path:
    """The newest session files of `folder` holding about `lines` lines, linked into `target` (no index)."""
    target.mkdir(parents=True, exist_ok=True)
    total = 0
    for path in sorted(folder.glob("*.jsonl"), reverse=True):
        if total >= lines:
            break
        os.link(path, target / path.name)
        total += _lines_in(path)
    return target


def _lines_in(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))


def common_word_by_scale(folder: Path, scratch: Path, common: str, anton_python: str | None, repeats: int) -> None:
    """The commonest word's warm recall at 100k, 300k lines and the whole seed, beside Anton's (which stops early on a
    common word: the newest turns already hold it)."""
    from anton_tui.memory.episodes.store import EpisodicMemory

    total = sum(_lines_in(path) for path in folder.glob("*.jsonl"))
    for lines in (100_000, 300_000, total):
        if lines > total:
            continue
        place = folder if lines == total else subset(folder, scratch / f"lines-{lines}", lines)
        memory = EpisodicMemory(place)
        memory.index.refresh()
        ours = _warm_median(lambda m=memory: m.recall(common))
        memory.close()
        if anton_python is None:
            print(f"recall of the commonest word at {lines:,} lines: {ours:,.3f} ms (anton-agent skipped: "
                  "ANTON_AGENT_PYTHON is not set)", flush=True)  # fmt: skip
            continue
        rounds = [anton_figures(anton_python, place, common, only=("common",)) for _ in range(repeats)]
        anton = statistics.median(r["common"] for r in rounds)
        verdict = "" if anton / ours >= 10 else " MISSED"
        print(
            f"recall of the commonest word at {lines:,} lines: ours {ours:,.3f} ms, anton-agent {anton:,.2f} ms, "
            f"{anton / ours:,.1f}x (target >= 10x){verdict}",
            flush=True,
        )


def build_in_fresh_process(folder: Path) -> dict[str, float]:
    """A full build of the index in a new interpreter, timed, with its resident memory before and at its peak."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_memory", "--build-probe", str(folder)],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def build_probe(folder: Path) -> None:
    from anton_tui.memory.episodes.store import EpisodicMemory

    memory = EpisodicMemory(folder)
    memory.recall("warm up the imports", max_results=0)
    with PeakRss() as rss:
        began = time.perf_counter()
        memory.index.refresh()
        seconds = time.perf_counter() - began
    memory.close()
    print(json.dumps({"seconds": seconds, "idle": rss.idle, "peak": rss.peak}))


_ANTON_SCRIPT = """
import json, statistics, sys, time
from pathlib import Path
from anton.core.memory.episodes import EpisodicMemory
folder, queries, repeats = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
memory = EpisodicMemory(folder)
out = {}
for name, asked in queries.items():
    times = []
    for query in asked if isinstance(asked, list) else [asked] * (1 if name == "rare" else repeats):
        began = time.perf_counter()
        memory.recall(query)
        times.append((time.perf_counter() - began) * 1000)
    out[name] = statistics.median(times)
print(json.dumps(out))
"""


def anton_figures(python: str, folder: Path, common: str, only: tuple[str, ...] = ()) -> dict[str, float]:
    """Anton's own recall on the same files (its first call and its warm calls cost the same: it has no index);
    "typicals" is the median over the typical queries, each asked once."""
    queries: dict[str, object] = {
        "typical": TYPICAL_QUERIES[0], "typicals": TYPICAL_QUERIES, "common": common, "rare": RARE_WORD,
    }  # fmt: skip
    if only:
        queries = {name: query for name, query in queries.items() if name in only}
    done = subprocess.run(
        [python, "-c", _ANTON_SCRIPT, str(folder), json.dumps(queries), "5"],
        capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    return json.loads(done.stdout)


def app_rss(home: Path, project: Path, hold: float) -> float:
    """Resident memory of the real app, started headless on this home, `hold` seconds after its process began."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANTON_", "ANTHROPIC_", "OPENAI_"))}
    env.update(ANTON_HOME=str(home), ANTON_PROJECT_DIR=str(project), ANTON_ANTHROPIC_API_KEY="bench-not-a-real-key")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.tui_startup_probe", "anton", "--hold", str(hold)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    for line in done.stdout.splitlines():
        if line.startswith("rss "):
            return float(line.split()[1])
    raise RuntimeError(f"the app probe failed (exit {done.returncode}):\n{done.stderr[-2000:]}")


def bare_rss() -> float:
    """Resident memory of the bare Textual app with the same widgets, at its first frame (what any app of this kind
    holds)."""
    script = (
        "import benchmarks.tui_startup_probe as p, sys\n"
        "p.say = lambda word: print(f'rss {p.resident_mb():.1f}', flush=True)\n"
        "p.run_bare()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    for line in done.stdout.splitlines():
        if line.startswith("rss "):
            return float(line.split()[1])
    raise RuntimeError(f"the bare app probe failed (exit {done.returncode}):\n{done.stderr[-2000:]}")


def _wait_for_idle_index(folder: Path) -> None:
    """Bring the index up to date again (the last app run above may have left a build half done)."""
    from anton_tui.memory.episodes.store import EpisodicMemory

    memory = EpisodicMemory(folder)
    memory.index.refresh()
    memory.close()


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--build-probe"]:
        build_probe(Path(argv[1]))
        return
    factor = int(argv[argv.index("--scale") + 1]) if "--scale" in argv else int(os.environ.get("ANTON_BENCH_SCALE", 1))
    scale = Scale(factor)
    repeats = int(os.environ.get("ANTON_BENCH_REPEAT", 3))
    anton_python = os.environ.get("ANTON_AGENT_PYTHON")
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.engrams.hippocampus import Hippocampus
    from anton_tui.memory.skills.store import SkillStore

    with tempfile.TemporaryDirectory(prefix="anton-bench-") as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        began = time.perf_counter()
        prose = seed(home, project, scale)
        folder = project / ".anton" / "episodes"
        jsonl = sum(path.stat().st_size for path in folder.glob("*.jsonl")) / 1e6
        print(
            f"memory seed, scale {factor} ({scale.skills:,} skills, {scale.lessons:,} lessons, {scale.rules:,} rules, "
            f"{scale.episode_lines:,} episode lines in {scale.sessions:,} sessions, {jsonl:,.0f} MB of JSONL): "
            f"{time.perf_counter() - began:.1f} s (setup, no target)",
            flush=True,
        )

        cortex = Cortex(Hippocampus(home / "memory", scope="global"), Hippocampus(project / ".anton" / "memory"))
        report("memory context, first call", _ms(cortex.build_memory_context))
        report("memory context, warm median", _warm_median(cortex.build_memory_context), 10)

        snapshot = home / "cache" / "skill-listing.txt"
        skills = SkillStore(home / "skills", listing_snapshot=snapshot)
        skill_files_floor(home / "skills")  # once untimed: the floor, timed after the listing, would find it warm
        first_listing = _ms(skills.list_summaries)
        floor = skill_files_floor(home / "skills")
        print(
            f"skill summaries, first call (this process, no snapshot): {first_listing:,.1f} ms; the floor, reading "
            f"each skill's one file: {floor:,.1f} ms; {first_listing / floor:,.1f}x (target <= 2x)"
            + ("" if first_listing <= 2 * floor else " MISSED"),
            flush=True,
        )
        from benchmarks.bench_skills import first_listing_in_new_processes, report_first_listings

        skills.save_listing_snapshot(settle_ns=0)  # as the app leaves it when it closes (nothing changes meanwhile)
        report_first_listings(first_listing_in_new_processes(home / "skills", snapshot), "skill summaries")
        report("skill summaries, warm median, checked by stat (no change feed)", _warm_median(skills.list_summaries))
        skills.follow_changes()  # as the app's warm-up does: listings ask inotify what changed, not a stat per skill
        report(
            "skill summaries, warm median with the change feed (as in the app)", _warm_median(skills.list_summaries), 20
        )
        skills.stop_following_changes()

        common = prose.common_word
        third = prose.word_at(WORD_IN_A_THIRD)
        ours = recall_figures(folder, common, repeats, third)
        runs = f"median of {repeats}"
        report(f"recall, first call while the index is built ({runs})", ours["first"])
        report(f"recall index, ready after the first call started ({runs})", ours["ready"], unit="s")
        report(
            f"recall index, full build in a fresh process ({runs})",
            ours["build"],
            10 if factor >= 10 else None,
            unit="s",
        )
        report(
            f"recall index, memory during the build above idle, in a fresh process ({runs})",
            ours["build_rss"],
            50,
            unit="MB",
        )
        print(
            f"recall index on disk (its SQLite file and its turn index): {ours['size']:,.1f} MB for {jsonl:,.0f} MB of JSONL "
            f"({ours['size'] / jsonl:.2f}x, target <= 0.5x){'' if ours['size'] <= jsonl / 2 else ' MISSED'}",
            flush=True,
        )
        report("recall, warm median over typical queries", ours["warm_typical"], 30)
        print(
            f"recall, warm median over typical queries: {ours['warm_typical']:,.3f} ms, the index's own query (the "
            f"ranked turn keys, nothing read back; each timed right after the recall of the same query) "
            f"{ours['own_query']:,.3f} ms: "
            f"{ours['warm_typical'] / ours['own_query']:,.1f}x (target <= 5x)"
            + ("" if ours["warm_typical"] <= 5 * ours["own_query"] else " MISSED"),
            flush=True,
        )
        print(
            f"recall, first call in a fresh process with the index on disk ({runs}): {ours['fresh_first']:,.2f} ms "
            f"(target <= 5 ms{', at a million lines' if factor >= 10 else ''}); the floor, opening the index and "
            f"running one ranked query in a fresh process: {ours['fresh_floor']:,.2f} ms; "
            f"{ours['fresh_first'] / ours['fresh_floor']:,.1f}x the floor"
            + (" MISSED" if factor >= 10 and ours["fresh_first"] > 5 else ""),
            flush=True,
        )
        report(
            f"recall of the commonest word ({common!r}, in every turn: all tie, the newest first), warm median",
            ours["warm_common"],
        )
        report(
            f"recall of a word in about a third of the turns ({third!r}, ranked by BM25), warm median",
            ours["warm_third"],
        )
        report(f"recall of a rare word ({RARE_WORD!r}), warm median", ours["warm_rare"])
        print(f"recall hits for 'coingecko': {ours['hits']} episodes (sanity check, no target)", flush=True)
        if anton_python:
            rounds = [anton_figures(anton_python, folder, common) for _ in range(repeats)]
            anton = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
            for name, key, mine, floor in (
                ("a typical query (our first call, while the index builds)", "typical", ours["first"], None),
                ("the typical queries (median; ours warm)", "typicals", ours["warm_typical"], 10),
                ("the commonest word", "common", ours["warm_common"], 10),
                ("a rare word", "rare", ours["warm_rare"], None),
            ):
                target = (
                    ""
                    if floor is None
                    else f" (target >= {floor}x)" + ("" if anton[key] / mine >= floor else " MISSED")
                )
                print(
                    f"anton-agent recall of {name}: {anton[key]:,.2f} ms ({runs} runs of its own process); ours "
                    f"{mine:,.3f} ms, {anton[key] / mine:,.1f}x{target}",
                    flush=True,
                )
        if factor >= 10:
            common_word_by_scale(folder, Path(scratch), common, anton_python, repeats)
        else:
            print("recall of the commonest word at 300k and 1M lines: skipped (needs --scale 10)", flush=True)
        ours_peak = statistics.median(engine_peak(sys.executable, home, project, "ours") for _ in range(repeats))
        if anton_python:
            anton_peak = statistics.median(engine_peak(anton_python, home, project, "anton") for _ in range(repeats))
            print(
                f"engine memory at its peak (a fresh process: memory context, skill list, the typical recalls; "
                f"{runs}): ours {ours_peak:,.1f} MB, anton-agent {anton_peak:,.1f} MB (target: ours <= anton-agent's)"
                + ("" if ours_peak <= anton_peak else " MISSED"),
                flush=True,
            )
        else:
            print(f"engine memory at its peak: ours {ours_peak:,.1f} MB; anton-agent skipped (ANTON_AGENT_PYTHON is "
                  "not set)", flush=True)  # fmt: skip
        bare = statistics.median(bare_rss() for _ in range(repeats))
        print(f"bare Textual app with the same widgets, memory (RSS) at its first frame: {bare:,.1f} MB (the floor)")
        for label, prepare, hold, target in (
            ("index built", lambda: None, 5.0, 100 if factor == 1 else 150),
            ("index built", lambda: None, 30.0, 100),
            ("while the index builds", lambda: _remove_index(folder), 5.0, 100 if factor == 1 else 150),
        ):
            values = []
            for _ in range(repeats):
                prepare()
                values.append(app_rss(home, project, hold))
            report(f"app memory (RSS) {hold:g} s after start, {label}, not typing ({runs})", statistics.median(values),
                   target, unit="MB")  # fmt: skip
        _wait_for_idle_index(folder)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
