"""Anton appending to lessons.md while we rewrite it, and our rewrites killed at any moment, lose nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from anton_tui.memory.files import replace
from anton_tui.memory.engrams.hippocampus import Hippocampus
from tests.race_workers import ANTON_LINE, crash_trials, race


def test_one_anton_appender_against_one_rewriter_loses_no_lesson(tmp_path: Path) -> None:
    result = race(tmp_path / "memory", appenders=1, rewriters=1, lessons=200)
    assert result["rewrites"] >= 10, result  # the two sides really ran at the same time
    assert (result["lost"], result["doubled"]) == (0, 0), result


def test_four_anton_appenders_against_four_rewriters_lose_no_lesson(tmp_path: Path) -> None:
    result = race(tmp_path / "memory", appenders=4, rewriters=4, lessons=200)
    assert result["rewrites"] >= 10, result
    assert (result["lost"], result["doubled"]) == (0, 0), result


def test_rewrites_killed_at_random_moments_leave_whole_files_and_no_temp_files(tmp_path: Path) -> None:
    result = crash_trials(tmp_path / "memory", kills=25, lines=2000, window=0.1)
    assert result["rewrites"] > 0, result  # the kills did land among finished rewrites
    assert result["partial"] == 0, result
    assert result["temp_left"] == 0, result


def _blocked_anton_appender(path: Path, text: str) -> subprocess.Popen:
    """An anton-agent style append that opens `path` now and waits for its lock (held by the caller)."""
    script = (
        "import fcntl, sys\n"
        "with open(sys.argv[1], 'a', encoding='utf-8') as f:\n"
        "    print('open', flush=True)\n"
        "    fcntl.flock(f.fileno(), fcntl.LOCK_EX)\n"
        "    f.write(sys.argv[2]); f.flush()\n"
        "    fcntl.flock(f.fileno(), fcntl.LOCK_UN)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script, str(path), text], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "open\n"
    time.sleep(0.2)  # now waiting in flock on the file we are about to replace
    return process


@pytest.mark.parametrize("leases", [True, False], ids=["with-leases", "without-leases"])
def test_an_append_waiting_on_the_replaced_file_is_carried_into_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leases: bool
) -> None:
    if not leases:
        monkeypatch.setattr(replace, "F_SETLEASE", None)
    hc = Hippocampus(tmp_path)
    hc.encode_lesson("first lesson")
    hc.encode_lesson("second lesson")
    appender: list[subprocess.Popen] = []

    def change(parsed):
        appender.append(_blocked_anton_appender(tmp_path / "lessons.md", ANTON_LINE.format(tag="w", n=1)))
        return [line for line in parsed.lines if "first" not in line]

    assert hc.rewrite_file("lessons", change)
    assert appender[0].wait(timeout=10) == 0
    assert [e.text for e in hc.get_lessons()] == ["second lesson", "anton lesson w 1"]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".lessons.md.")]


def test_a_carry_left_by_a_killed_writer_is_finished_by_the_next_write(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    path = tmp_path / "lessons.md"
    old = "# Lessons\n- kept lesson <!-- ts:2026-11-25 -->\n"
    path.write_text(old)
    link = tmp_path / f".lessons.md.{pid}.0badc0de.{len(old)}.carry"
    os.link(path, link)  # the killed writer had linked the old file ...
    new = tmp_path / "new"
    new.write_text(old + "- written by the rewrite <!-- ts:2026-11-25 -->\n")
    os.replace(new, path)  # ... and renamed its new file over it; then Anton appended to the old file:
    with open(link, "a") as handle:
        handle.write(ANTON_LINE.format(tag="late", n=7))

    assert Hippocampus(tmp_path).encode_lesson("the next write")
    texts = [e.text for e in Hippocampus(tmp_path).get_lessons()]
    assert texts == ["kept lesson", "written by the rewrite", "anton lesson late 7", "the next write"]
    assert not link.exists()


def test_temp_files_of_dead_writers_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".lessons.md.{int(dead.stdout)}.1234abcd.tmp"
    live = tmp_path / f".lessons.md.{os.getppid()}.1234abcd.tmp"
    other = tmp_path / f".rules.md.{int(dead.stdout)}.1234abcd.tmp"
    for leftover in (stale, live, other):
        leftover.write_bytes(b"x" * 1000)
    assert Hippocampus(tmp_path).encode_lesson("a lesson")
    assert (stale.exists(), live.exists(), other.exists()) == (False, True, True)


def test_a_reader_never_takes_half_an_appended_line_for_a_lesson(tmp_path: Path) -> None:
    hc = Hippocampus(tmp_path)
    hc.encode_lesson("an older lesson")
    script = (
        "import fcntl, sys, time\n"
        "with open(sys.argv[1], 'a', encoding='utf-8') as f:\n"
        "    fcntl.flock(f.fileno(), fcntl.LOCK_EX)\n"
        "    f.write('- half a les'); f.flush()\n"
        "    print('half', flush=True); time.sleep(0.5)\n"
        "    f.write('son <!-- ts:2026-11-25 -->\\n'); f.flush()\n"
        "    fcntl.flock(f.fileno(), fcntl.LOCK_UN)\n"
    )
    appender = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path / "lessons.md")], stdout=subprocess.PIPE, text=True
    )
    assert appender.stdout is not None and appender.stdout.readline() == "half\n"
    assert "half a les" not in [e.text for e in hc.get_lessons()]
    assert appender.wait(timeout=10) == 0
    assert [e.text for e in hc.get_lessons()] == ["an older lesson", "half a lesson"]


def test_a_last_line_without_newline_in_a_hand_edited_file_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "lessons.md").write_text("# Lessons\n- first\n- typed by hand, no newline")
    assert [e.text for e in Hippocampus(tmp_path).get_lessons()] == ["first", "typed by hand, no newline"]
