"""The collector policy: no collections while the app starts, start-up's objects kept out of later collections, and
full collections put off to the end of turns; all of it only in a process started by the command line, which also
has big freed blocks go back to the system at once (as the memory stores do on their own for a big file); and what a
process that only uses the memory loads."""

from __future__ import annotations

import gc
import platform
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import gc
    from anton_tui import gc_policy

    defaults = gc.get_threshold()
    gc_policy.release(); gc_policy.collect_between_turns()
    untouched = (gc.isenabled(), gc.get_freeze_count(), gc.get_threshold())
    gc_policy.hold()
    held = gc.isenabled()
    kept = [[n] for n in range(1000)]  # start-up's long-lived objects
    gc_policy.release()
    print(untouched[0], untouched[1] == 0, untouched[2] == defaults)
    print(held, gc.isenabled(), gc.get_freeze_count() >= 1000, gc.get_threshold()[2] == gc_policy.FULL_COLLECTION_AFTER)
    """
)


def test_the_collector_waits_for_the_first_frame_then_skips_start_up_objects_only_when_held() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    untouched, held = result.stdout.split("\n")[:2]
    assert untouched == "True True True", "without hold() the defaults stay"
    assert held == "False True True True", (
        "held: off while starting, then on with start-up frozen and full passes put off"
    )


BIG_BLOCKS = textwrap.dedent(
    """
    from anton_tui import gc_policy

    def resident_mb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024

    gc_policy.hold()  # as the command line does first thing
    lessons = b"x" * (8 << 20)  # a big memory file read whole, then let go
    del lessons
    before = resident_mb()
    rules = b"y" * (6 << 20)  # a smaller one read after it
    kept = b"z" * 4096  # something that stays, made after it
    del rules
    print(round(resident_mb() - before, 1))
    """
)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the threshold is glibc's")
def test_a_big_block_freed_after_a_bigger_one_goes_back_to_the_system() -> None:
    result = subprocess.run([sys.executable, "-c", BIG_BLOCKS], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) < 2, f"{result.stdout.strip()} MB of a freed 6 MB block stayed resident"


BIG_MEMORY_FILES = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from anton_tui.memory.engrams.hippocampus import Hippocampus

    def resident_mb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024

    home = Path(sys.argv[1])
    for scope, megabytes in (("global", 8), ("project", 6)):
        folder = home / "big" / scope
        folder.mkdir(parents=True)
        notes = ("# " + "n" * 61 + "\\n") * (megabytes * 1024 * 1024 // 64)  # headers: read, and none kept
        (folder / "lessons.md").write_text("# Lessons\\n- the one lesson\\n" + notes)
    Hippocampus(home / "big" / "global", scope="global").get_lessons()  # no hold(): a script using the memory
    before = resident_mb()
    lessons = Hippocampus(home / "big" / "project").get_lessons()
    print(len(lessons), round(resident_mb() - before, 1))
    """
)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the threshold is glibc's")
def test_a_big_memory_file_read_after_a_bigger_one_leaves_nothing_resident_without_the_command_line(
    tmp_path,
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", BIG_MEMORY_FILES, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    count, grown = result.stdout.split()
    assert count == "1", "the file's one lesson is read"
    assert float(grown) < 2, f"{grown} MB of reading a 6 MB memory file stayed resident"


def _skills(root, count: int):
    for n in range(count):
        folder = root / f"skill-{n:05d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: skill-{n:05d}\ndescription: Does thing {n}\n---\nSteps.\n")
    return root


def test_a_first_skill_listing_sets_off_no_collection_and_leaves_the_collector_as_it_found_it(tmp_path) -> None:
    from anton_tui.memory.skills.store import SkillStore

    runs: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            runs.append(info["generation"])

    on, held = SkillStore(_skills(tmp_path / "on", 1500)), SkillStore(_skills(tmp_path / "held", 300))
    threshold, was_on = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(50)  # a collection every 50 new containers: thousands of skills would set off dozens
    gc.callbacks.append(count)
    try:
        gc.enable()
        listed = on.list_summaries()
        during = len(runs)
        assert len(listed) == 1500
        assert during <= 2, f"{during} collections during the listing"  # (young passes may run as it ends)
        assert gc.isenabled(), "the collector is on again after the listing"
        gc.disable()  # held, as while the app starts
        assert len(held.list_summaries()) == 300
        assert not gc.isenabled(), "a listing does not switch on a collector that was held"
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)
        if was_on:
            gc.enable()


def test_a_process_that_only_uses_the_memory_loads_no_settings_file_reader_and_no_rebuild_tools() -> None:
    """A script or command that reads the memory, lists the skills and recalls stays small: python-dotenv (with the
    tempfile and shutil it brings) loads only to read a .env file, difflib only for a mistyped skill label, html only
    to hide a secret."""
    code = textwrap.dedent(
        """
        import sys
        from anton_tui.memory.engrams.cortex import Cortex
        from anton_tui.memory.engrams.hippocampus import Hippocampus
        from anton_tui.memory.episodes.store import EpisodicMemory
        from anton_tui.memory.skills.store import SkillStore
        print(" ".join(name for name in ("dotenv", "difflib", "tempfile", "html") if name in sys.modules) or "none")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "none"
