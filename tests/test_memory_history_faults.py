"""The memory history under faults: a commit killed with SIGKILL at any moment, git lock files it left behind, a full
disk, two app windows writing the same scope at once, and commits from a shared remote whose trailers ask for
more than a change. Real processes, real kill -9, real dulwich repositories, a real full file system where it can be
mounted."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from anton_tui.memory.history import ops as history_ops
from anton_tui.memory.history.repo import BRANCH
from anton_tui.memory.stores import MemoryStores
from anton_tui.memory.sync import syncer as sync
from anton_tui.paths import AntonPaths
from tests.fs_faults import fill, read_only, small_disk

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def stores(anton_home: Path, project_dir: Path) -> MemoryStores:
    return MemoryStores.from_paths(AntonPaths(anton_home, project_dir))


def worker(action: str, home: Path, project: Path, tag: str, count: int | None = None) -> subprocess.Popen:
    args = [sys.executable, "-m", "tests.history_workers", action, str(home), str(project), tag]
    args += [str(count)] if count is not None else []
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def head_lessons(stores: MemoryStores, scope: str = "global") -> bytes | None:
    history = stores.recorder.history(scope)
    return history.files_at(history.head()).get("lessons.md")


def first_parent_chain(stores: MemoryStores, scope: str = "global") -> list[bytes]:
    """The commits of a scope's history, oldest first."""
    repo = stores.recorder.history(scope).repo()
    chain, cid = [], repo.refs[BRANCH]
    while cid is not None:
        chain.append(cid)
        parents = repo[cid].parents
        cid = parents[0] if parents else None
    return chain[::-1]


# ---- a killed commit --------------------------------------------------------------------------------------------


def test_git_lock_files_left_by_a_killed_commit_do_not_stop_the_history(stores: MemoryStores) -> None:
    from dulwich.objects import Blob

    hc = stores.global_hc
    hc.encode_lesson("first lesson")
    stores.recorder.flush()
    git_dir = stores.recorder.history("global").git_dir
    (git_dir / "refs" / "heads" / "main.lock").write_bytes(b"")  # what a writer killed mid-commit leaves
    told: list[str] = []
    stores.recorder.on_problem = lambda scope, message: told.append(message)
    hc.encode_lesson("second lesson")
    stores.recorder.flush()
    edited = hc.lessons_path.read_bytes() + b"- added in an editor\n"
    blob = Blob.from_string(edited)
    object_lock = git_dir / "objects" / blob.id[:2].decode() / (blob.id[2:].decode() + ".lock")
    object_lock.parent.mkdir(parents=True, exist_ok=True)
    object_lock.write_bytes(b"")  # a stale lock on the very object the next commit writes
    hc.lessons_path.write_bytes(edited)
    stores.recorder.record_external("global")
    stores.recorder.flush()
    assert told == [], told
    summaries = [c.summary for c in history_ops.log(stores, scope="global")]
    assert summaries[0].endswith("added in an editor") and summaries[1].endswith("second lesson")
    assert head_lessons(stores) == edited
    assert not [p for p in git_dir.rglob("*.lock") if p.name != "anton-writer.lock"]


def test_a_history_that_truly_cannot_be_written_says_why_in_one_line(stores: MemoryStores, anton_home: Path) -> None:
    stores.project_hc.encode_lesson("a first lesson")
    stores.recorder.flush()
    told: list[str] = []
    stores.recorder.on_problem = lambda scope, message: told.append(message)
    with read_only(anton_home / "history"):
        stores.project_hc.encode_lesson("a lesson that is saved anyway")
        stores.recorder.flush()
    assert [e.text for e in stores.project_hc.get_lessons()] == ["a first lesson", "a lesson that is saved anyway"]
    assert len(told) == 1 and "\n" not in told[0] and "(b'" not in told[0], told
    assert "Read-only file system" in told[0] or "Permission denied" in told[0]


def test_a_history_whose_creation_was_killed_midway_is_created_again(stores: MemoryStores) -> None:
    git_dir = stores.recorder.history("global").git_dir
    (git_dir / "branches").mkdir(parents=True)  # a creation killed after its first files
    (git_dir / "HEAD").write_text("ref: refs/heads/master\n")
    told: list[str] = []
    stores.recorder.on_problem = lambda scope, message: told.append(message)
    stores.global_hc.encode_lesson("recorded all the same")
    stores.recorder.flush()
    assert told == [] and history_ops.log(stores, scope="global")[0].summary.endswith("recorded all the same")


def test_a_commit_killed_at_random_moments_leaves_a_history_that_still_records(
    stores: MemoryStores, anton_home: Path, project_dir: Path
) -> None:
    rng = random.Random(7)
    git_dir = stores.recorder.history("global").git_dir
    left_locks = 0
    for run in range(8):
        process = worker("forever", anton_home, project_dir.parent / "other-window", f"run{run}")
        time.sleep(rng.uniform(0.6, 1.6))  # start-up, then a random moment among the writes and commits
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        left_locks += any(path.name != "anton-writer.lock" for path in git_dir.rglob("*.lock"))
        fresh = MemoryStores.from_paths(AntonPaths(anton_home, project_dir))
        told: list[str] = []
        fresh.recorder.on_problem = lambda scope, message, told=told: told.append(message)
        fresh.recorder.start()  # as the app starts: what the killed window wrote and did not record, as external
        fresh.global_hc.encode_lesson(f"written after kill number {run}")
        assert fresh.recorder.flush(60)
        assert told == [], told
        newest = history_ops.log(fresh, scope="global")[0]
        assert newest.summary.endswith(f"written after kill number {run}"), newest
        assert head_lessons(fresh) == fresh.global_hc.lessons_path.read_bytes()
        assert not [p for p in git_dir.rglob("*.lock") if p.name != "anton-writer.lock"], "none left behind"
    print(f"kill -9 runs: 8, lock files left behind by the kill: {left_locks}, history recording after each: 8")


# On a full disk dulwich's lock file cannot even be closed when it gives up (its finaliser says so): the lock file it
# leaves behind is what the next commit clears.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_full_disk_stops_recording_not_memory_and_the_history_resumes_once_there_is_room(
    stores: MemoryStores, anton_home: Path
) -> None:
    history_root = anton_home / "history"
    with small_disk(history_root, "2m"):
        hc = stores.global_hc
        hc.encode_lesson("recorded before the disk filled up")
        stores.recorder.flush()
        told: list[str] = []
        stores.recorder.on_problem = lambda scope, message: told.append(message)
        filler = fill(history_root)
        for i in range(5):
            hc.encode_lesson(f"saved while the history's disk is full {i}")
        stores.recorder.flush()
        assert len([e for e in hc.get_lessons() if "disk is full" in e.text]) == 5
        assert len(told) == 1 and "No space left on device" in told[0] and "\n" not in told[0], told
        filler.unlink()
        hc.encode_lesson("recorded once there is room again")
        stores.recorder.flush()
        assert head_lessons(stores) == hc.lessons_path.read_bytes()
        newest = history_ops.log(stores, scope="global")[0]  # it takes in what could not be recorded meanwhile
        assert "+- recorded once there is room again" in history_ops.show(stores, newest.short)[1]
        assert not [p for p in history_root.rglob("*.lock") if p.name != "anton-writer.lock"]


# ---- two windows ------------------------------------------------------------------------------------------------


def test_two_windows_writing_the_same_scope_record_no_change_nobody_made_and_undo_is_exact(
    anton_home: Path, project_dir: Path
) -> None:
    writers = [worker("write", anton_home, project_dir.parent / f"window-{tag}", tag, 200) for tag in ("A", "B")]
    for process in writers:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert "flushed=True problems={}" in out, out + err
    stores = MemoryStores.from_paths(AntonPaths(anton_home, project_dir))
    chain = first_parent_chain(stores)
    versions = [stores.recorder.history("global").files_at(cid).get("lessons.md", b"") for cid in chain]
    for older, newer in zip(versions, versions[1:], strict=False):
        assert newer.startswith(older), "a change took out lessons that nobody removed"
    disk = stores.global_hc.lessons_path.read_bytes()
    assert versions[-1] == disk
    written = {f"{tag} lesson number {n}" for tag in "AB" for n in range(200)}
    assert {e.text for e in stores.global_hc.get_lessons()} == written
    changes = [c for c in history_ops.log(stores, scope="global") if not c.summary.startswith("nothing")]
    assert not [c for c in changes if "removed" in c.summary or " -0" not in c.summary], "a phantom removal"
    print(f"two processes x 200 writes: {len(chain)} commits, none removing a lesson")
    rng = random.Random(3)
    for change in rng.sample(changes[:-1], 8):
        before = stores.global_hc.lessons_path.read_bytes()
        old, new = stores.recorder.history("global").versions(change.id)
        added = Counter(new["lessons.md"].splitlines(keepends=True)) - Counter(old["lessons.md"].splitlines(keepends=True))
        outcome = history_ops.undo(stores, change.id)
        assert outcome.done, outcome.conflicts
        after = stores.global_hc.lessons_path.read_bytes()
        assert Counter(before.splitlines(keepends=True)) - Counter(after.splitlines(keepends=True)) == added
        assert not Counter(after.splitlines(keepends=True)) - Counter(before.splitlines(keepends=True))
        assert max(Counter(after.splitlines()).values()) == 1, "undo duplicated a lesson"


# ---- commits from a remote --------------------------------------------------------------------------------------


def test_a_commit_from_the_team_remote_cannot_move_files_through_its_trailers(tmp_path: Path, anton_home: Path) -> None:
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    machines = []
    for name in ("laptop", "server"):
        (tmp_path / name / "project").mkdir(parents=True)
        stores = MemoryStores.from_paths(AntonPaths(tmp_path / name / "home", tmp_path / name / "project"))
        stores.recorder.start()
        sync.add_remote(stores, "global", str(bare))
        machines.append(stores)
    laptop, server = machines
    laptop.global_hc.encode_lesson("a shared lesson")
    assert sync.sync(laptop, "global").pushed
    victim = tmp_path / "another-project" / "episodes"
    victim.mkdir(parents=True)
    (victim / "20261101_090000.jsonl").write_text('{"role": "user", "content": "private"}\n')
    remote = Repo(str(bare))
    parent = remote.refs[b"refs/heads/main"]
    blob = Blob.from_string(remote[remote[remote[parent].tree][b"lessons.md"][1]].data + b"- harmless looking\n")
    tree = Tree()
    tree.add(b"lessons.md", 0o100644, blob.id)
    commit = Commit()
    commit.tree, commit.parents = tree.id, [parent]
    commit.author = commit.committer = b"someone <someone@example.com>"
    commit.commit_time = commit.author_time = int(time.time())
    commit.commit_timezone = commit.author_timezone = 0
    commit.message = (b"lessons.md +1 -0: harmless looking\n\nProducer: reset\nScope: project\n"
                      b"Archive: " + str(victim).encode() + b"\n")  # fmt: skip
    for obj in (blob, tree, commit):
        remote.object_store.add_object(obj)
    remote.refs[b"refs/heads/main"] = commit.id
    assert sync.sync(server, "global").ok
    imported = next(c for c in history_ops.log(server) if c.id == commit.id.decode())
    assert imported.imported and imported.scope == "global" and imported.archive == ""
    with pytest.raises(history_ops.HistoryError, match="another machine"):
        history_ops.undo(server, imported.short)
    assert (victim / "20261101_090000.jsonl").read_text() == '{"role": "user", "content": "private"}\n'
    assert not list(server.episodic.episodes_dir.glob("*.jsonl")) if server.episodic.episodes_dir.exists() else True
    assert "harmless looking" in server.global_hc.lessons_path.read_text()


def test_undo_of_an_episodic_reset_moves_back_only_from_the_projects_own_archive(stores: MemoryStores, tmp_path: Path) -> None:
    folder = stores.episodic.episodes_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "20261101_090000.jsonl").write_text('{"role": "user", "content": "mine"}\n')
    reset = history_ops.reset(stores, "episodic")
    assert reset is not None and not (folder / "20261101_090000.jsonl").exists()
    assert history_ops.undo(stores, reset.short).done
    assert (folder / "20261101_090000.jsonl").read_text() == '{"role": "user", "content": "mine"}\n'
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.jsonl").write_text("{}\n")
    from anton_tui.memory.history.origin import Origin

    forged = stores.recorder.history("project").commit({}, Origin("reset", archive=str(elsewhere)), allow_empty=True)
    assert forged is not None
    with pytest.raises(history_ops.HistoryError, match="outside this project"):
        history_ops.undo(stores, forged.short)
    assert (elsewhere / "x.jsonl").exists()
