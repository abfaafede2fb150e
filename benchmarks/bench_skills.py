"""Listing skills from every source: 1,000 of the user's own SKILL.md skills (10,000 with ``--scale 10``) plus 200 in
other tools' folders (the project's .agents/skills, ~/.agents/skills, ~/.claude/skills) and the built-in ones, as the
prompt builds its skill list each turn. Target: `list_summaries` under 20 ms warm (checked by `stat`, one per skill:
20 ms for each 1,000 of the user's skills).

The first call (nothing cached yet) is printed beside its floor, listing each of those folders and reading each
skill's one file (target: at most twice the floor; those files are read once, untimed, before either is timed, so
that the floor, timed second, does not find warm what the listing found cold). It is timed three ways: in this
process with no snapshot (each skill's SKILL.md and the stats.json the store saved beside it read, its folder
listed), then in new processes, alternated, with no snapshot and with the listing snapshot this process leaves (as
the app leaves one when it closes: each skill's folder, SKILL.md and stats.json checked by `lstat`). Then a warm call
after one skill changed (the one folder is read again). Warm calls are timed twice: checking every skill by `stat`,
then with the change feed on, as the app runs (`follow_changes()` in its warm-up: the listing asks inotify what
changed instead)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from anton_tui.memory.skills.sources import skill_sources
from anton_tui.memory.skills.store import Skill, SkillStore
from benchmarks.bench_memory import _ms, _warm_median, report, skill_files_floor

SCALE = int(os.environ.get("ANTON_BENCH_SCALE", "1"))
USER_SKILLS = 1000 * SCALE
OTHER_SKILLS = {"project": 50, "agents": 75, "claude": 75}


def seed(base: Path) -> SkillStore:
    project, home = base / "project", base / "home"
    store = SkillStore(
        base / "anton" / "skills",
        sources=skill_sources(project, home=home),
        listing_snapshot=base / "anton" / "cache" / "skill-listing.txt",
    )
    for number in range(USER_SKILLS):
        store.save(
            Skill(
                label=f"user-skill-{number}",
                name=f"User skill {number}",
                description=f"Does step {number} of the monthly report",
                when_to_use="When the monthly report is due",
                declarative_md="1. Load\n2. Summarise\n" * 20,
            )
        )
    folders = {"project": project / ".agents" / "skills", "agents": home / ".agents" / "skills",
               "claude": home / ".claude" / "skills"}  # fmt: skip
    for key, count in OTHER_SKILLS.items():
        for number in range(count):
            folder = folders[key] / f"{key}-skill-{number}"
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(
                f"---\nname: {key}-skill-{number}\ndescription: A {key} skill number {number}\n---\n1. Go\n"
            )
    return store


_FIRST_LISTING = """
import json, sys, time
from pathlib import Path
from anton_tui.memory.skills.sources import skill_sources
from anton_tui.memory.skills.store import SkillStore
from benchmarks.bench_memory import skill_files_floor
root, project, home, snapshot = sys.argv[1:5]
sources = skill_sources(Path(project), home=Path(home)) if project != "-" else ()
store = SkillStore(Path(root), sources=sources, listing_snapshot=None if snapshot == "-" else Path(snapshot))
folders = (store.root, *(source.path for source in store.sources))
for folder in folders:
    skill_files_floor(folder)
began = time.perf_counter()
store.list_summaries()
first = (time.perf_counter() - began) * 1000
print(json.dumps([first, sum(skill_files_floor(folder) for folder in folders)]))
"""


def first_listing_in_new_processes(
    root: Path, snapshot: Path, project: Path | None = None, home: Path | None = None
) -> dict[str, tuple[float, float]]:
    """The first skill listing of a new process and the floor in the same process (each skill's one file read once
    untimed, first), with no snapshot and with the one the last run left at `snapshot`, alternated
    ``ANTON_BENCH_REPEAT`` times (default 3): medians of each, in ms, by "none" and "snapshot"."""
    repeats = int(os.environ.get("ANTON_BENCH_REPEAT", "3"))
    figures: dict[str, list[tuple[float, float]]] = {"none": [], "snapshot": []}
    for _ in range(repeats):
        for kind, path in (("none", "-"), ("snapshot", str(snapshot))):
            args = [str(root), str(project or "-"), str(home or "-"), path]
            done = subprocess.run([sys.executable, "-c", _FIRST_LISTING, *args], capture_output=True, text=True,
                                  check=True, cwd=Path(__file__).parents[1])  # fmt: skip
            first, floor = json.loads(done.stdout)
            figures[kind].append((first, floor))
    return {
        kind: (statistics.median(first for first, _ in runs), statistics.median(floor for _, floor in runs))
        for kind, runs in figures.items()
    }


def report_first_listings(figures: dict[str, tuple[float, float]], what: str) -> None:
    """Print the first listing in new processes beside its floor, without and with the snapshot (target: at most
    twice the floor)."""
    for kind, how in (("none", "no snapshot (a home no run has listed)"),
                      ("snapshot", "with the snapshot the last run left")):  # fmt: skip
        first, floor = figures[kind]
        print(f"{what}, first call in a new process, {how}: {first:,.1f} ms; the floor, reading each skill's one "
              f"file: {floor:,.1f} ms; {first / floor:.1f}x (target <= 2x, medians)"
              f"{'' if first <= 2 * floor else ' MISSED'}", flush=True)  # fmt: skip


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="anton-bench-skills-") as scratch:
        store = seed(Path(scratch))
        folders = (store.root, *(s.path for s in store.sources))
        for folder in folders:  # once untimed: the floor, timed after the listing, would find it warm
            skill_files_floor(folder)
        found: list = []
        first = _ms(lambda: found.extend(store.list_summaries()))
        floor = sum(skill_files_floor(folder) for folder in folders)
        expected = USER_SKILLS + sum(OTHER_SKILLS.values())
        assert len([s for s in found if s["source"] != "builtin"]) == expected, len(found)
        print(f"skills listed: {len(found)} ({expected} seeded + built-in), pid {os.getpid()}", flush=True)
        print(f"skill summaries, {USER_SKILLS:,} user + 200 other tools' skills, first call: {first:,.1f} ms; the "
              f"floor, listing each folder and reading each skill's one file: {floor:,.1f} ms; {first / floor:.1f}x "
              f"(target <= 2x){'' if first <= 2 * floor else ' MISSED'}", flush=True)  # fmt: skip
        snapshot = Path(scratch) / "anton" / "cache" / "skill-listing.txt"
        written = store.save_listing_snapshot(settle_ns=0)  # (nothing changes the seeded home meanwhile)
        print(f"snapshot written: {written:,} skills, {snapshot.stat().st_size / 1e6:.1f} MB", flush=True)
        base = Path(scratch)
        figures = first_listing_in_new_processes(store.root, snapshot, base / "project", base / "home")
        report_first_listings(figures, f"skill summaries, {USER_SKILLS:,} user + 200 other tools' skills")
        warm_figures(store, "")
        began = time.perf_counter()
        assert store.follow_changes(), "no change feed here (not Linux?)"
        report("starting the change feed (a watch per skill folder, as the app's warm-up does)",
               (time.perf_counter() - began) * 1000)  # fmt: skip
        warm_figures(store, ", with the change feed")
        store.stop_following_changes()


def warm_figures(store: SkillStore, how: str) -> None:
    target = 20 if how else 20 * SCALE  # checked by `stat`, a warm listing costs one per skill
    report(f"skill summaries, {USER_SKILLS:,} user + 200 other tools' skills, warm median{how}",
           _warm_median(store.list_summaries), target)  # fmt: skip
    cpu = []
    for _ in range(30):
        began = time.process_time()
        store.list_summaries()
        cpu.append((time.process_time() - began) * 1000)
    report(f"skill summaries, warm median CPU time (what the listing costs when the machine is busy){how}",
           statistics.median(cpu), target)  # fmt: skip
    edited = store.root / "user-skill-500" / "SKILL.md"

    def after_one_edit() -> None:
        edited.write_text(edited.read_text() + "\n")
        store.list_summaries()

    report(f"skill summaries after one SKILL.md changed (write included), median{how}", _warm_median(after_one_edit))


if __name__ == "__main__":
    main()
