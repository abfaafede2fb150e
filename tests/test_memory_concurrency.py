"""Many writers at once, in separate processes and threads, must never lose a memory."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.engrams.engram import Engram
from anton_tui.memory.engrams.hippocampus import Hippocampus

PROCESSES = 8
WRITES_EACH = 50
KINDS = ("always", "never", "when", "lesson")


def engram_for(worker: int, item: int) -> Engram:
    kind = KINDS[(worker + item) % len(KINDS)]
    return Engram(f"worker {worker} item {item}", kind, scope="global", confidence="high", topic=f"w{worker}")


def write_many(global_dir: str, project_dir: str, worker: int, barrier) -> None:
    cortex = Cortex(Hippocampus(global_dir, scope="global"), Hippocampus(project_dir))
    barrier.wait()
    for item in range(WRITES_EACH):
        actions = cortex.encode([engram_for(worker, item)])
        assert actions[0].startswith("Encoded"), actions


def expected_texts(workers: int, items: int) -> dict[str, list[str]]:
    by_file: dict[str, list[str]] = {"rules": [], "lessons": []}
    for worker in range(workers):
        for item in range(items):
            engram = engram_for(worker, item)
            by_file["lessons" if engram.kind == "lesson" else "rules"].append(engram.text)
    return by_file


def check_store(hc: Hippocampus, workers: int, items: int) -> None:
    expected = expected_texts(workers, items)
    assert hc.entry_count() == workers * items
    assert sorted(e.text for e in hc.get_rules()) == sorted(expected["rules"])
    assert sorted(e.text for e in hc.get_lessons()) == sorted(expected["lessons"])
    for rule in hc.get_rules():
        worker, item = (int(part) for part in rule.text.split()[1::2])
        assert rule.kind == engram_for(worker, item).kind
    assert hc.problems() == []


def test_eight_processes_writing_one_global_scope_lose_nothing(tmp_path: Path) -> None:
    global_dir, project_dir = tmp_path / "global", tmp_path / "project"
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(PROCESSES)
    workers = [
        context.Process(target=write_many, args=(str(global_dir), str(project_dir), worker, barrier))
        for worker in range(PROCESSES)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=90)
    assert [process.exitcode for process in workers] == [0] * PROCESSES

    check_store(Hippocampus(global_dir, scope="global"), PROCESSES, WRITES_EACH)
    rules = (global_dir / "rules.md").read_text()
    headings = [line for line in rules.splitlines() if line.startswith("#")]
    assert headings == ["# Rules", "## Always", "## Never", "## When"]
    assert not list(global_dir.glob("*.tmp")) and not list(global_dir.glob(".*.tmp"))
    assert not (project_dir / "rules.md").exists()


def test_threads_sharing_one_store_lose_nothing(tmp_path: Path) -> None:
    hc = Hippocampus(tmp_path / "global", scope="global")
    cortex = Cortex(hc, Hippocampus(tmp_path / "project"))
    threads, items = 6, 25
    start = threading.Barrier(threads)
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            start.wait()
            for item in range(items):
                cortex.encode([engram_for(worker, item)])
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(worker,)) for worker in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=60)
    assert errors == []
    check_store(hc, threads, items)


def test_deletes_racing_with_appends_keep_every_other_entry(tmp_path: Path) -> None:
    hc = Hippocampus(tmp_path)
    for i in range(40):
        hc.encode_lesson(f"doomed lesson {i}")
    doomed = [e.id for e in hc.get_lessons()]

    def delete_all() -> None:
        for entry_id in doomed:
            assert hc.delete_entry("lessons", entry_id)

    def append_all() -> None:
        for i in range(40):
            assert hc.encode_lesson(f"kept lesson {i}")

    pool = [threading.Thread(target=delete_all), threading.Thread(target=append_all)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=60)
    assert [e.text for e in hc.get_lessons()] == [f"kept lesson {i}" for i in range(40)]
