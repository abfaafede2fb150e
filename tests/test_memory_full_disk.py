"""A lesson appended when the disk is full (or the file may not grow) is not written at all: the file is left as it
was, with no cut-off line to be read as a lesson. Tried on a real full file system (a small tmpfs, where it can be
mounted) and under a file size limit (`RLIMIT_FSIZE`, in a child process), which every user can set."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from anton_tui.memory.engrams.hippocampus import Hippocampus
from tests.fs_faults import fill, small_disk


def test_a_lesson_that_does_not_fit_on_a_full_disk_leaves_the_file_as_it_was(anton_home: Path) -> None:
    memory = anton_home / "memory"
    with small_disk(memory, "64k"):
        hc = Hippocampus(memory, scope="global")
        hc.encode_lesson("the first lesson, written while there is room")
        fill(memory)
        failed = None
        for i in range(200):  # the file's last block still has room for a few lines; then one is cut short
            before = hc.lessons_path.read_bytes()
            try:
                hc.encode_lesson(f"lesson {i}: " + "a sentence long enough to cross a block boundary soon " * 3)
            except OSError as exc:
                failed = exc
                break
        assert failed is not None and "No space left" in str(failed)
        assert hc.lessons_path.read_bytes() == before, "the failed append left bytes behind"
        assert before.endswith(b"\n") and not hc.problems()


def test_a_lesson_past_the_file_size_limit_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    Hippocampus(folder).encode_lesson("the first lesson")
    script = textwrap.dedent(f"""
        import resource, sys
        from pathlib import Path
        from anton_tui.memory.engrams.hippocampus import Hippocampus
        hc = Hippocampus(Path({str(folder)!r}))
        size = hc.lessons_path.stat().st_size
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, resource.RLIM_INFINITY))
        try:
            hc.encode_lesson("a lesson far longer than the forty bytes the file may still grow by, so it is cut")
        except OSError as exc:
            print("refused:", exc.strerror)
    """)
    before = (folder / "lessons.md").read_bytes()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "refused: File too large" in done.stdout, done.stdout + done.stderr
    assert (folder / "lessons.md").read_bytes() == before
    assert [e.text for e in Hippocampus(folder).get_lessons()] == ["the first lesson"]

