"""The list of changes kept beside each history repository: what `anton-tui memory log` reads instead of walking
commits. It must agree with the repository (commits made by other git tools, a packed ref, a torn file), catch
files changed on disk while nothing ran, and let a fresh `memory log` answer without loading the git library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from anton_tui.memory.history import log_index as history_index

from anton_tui.memory.history import ops as history_ops
from anton_tui.memory.history.origin import producing
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths


@pytest.fixture
def stores(anton_home: Path, project_dir: Path) -> MemoryStores:
    return MemoryStores.from_paths(AntonPaths(anton_home, project_dir))


def cli(*args: str, probe: str = "") -> subprocess.CompletedProcess:
    """`anton-tui memory ...` in a fresh process; `probe` is Python run after it, in the same process."""
    code = f"import sys; from anton_tui.cli import main; rc = main({list(args)!r}); sys.stdout.flush(); {probe}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ), timeout=60)


def lessons(stores: MemoryStores, *texts: str) -> None:
    for text in texts:
        with producing("consolidator", session="s1", turn=1):
            stores.project_hc.encode_lesson(text)
    stores.recorder.flush()


def test_a_fresh_memory_log_with_nothing_changed_does_not_load_the_git_library(stores: MemoryStores) -> None:
    lessons(stores, "first lesson", "second lesson")
    stores.global_hc.encode_rule("never print API keys", "never")
    stores.recorder.flush()
    out = cli("memory", "log", "--json", probe="print('dulwich loaded' if 'dulwich' in sys.modules else 'no git')")
    listed = json.loads(out.stdout.splitlines()[0])
    assert len(listed) == 3 and out.stdout.splitlines()[1] == "no git", out.stderr


def test_a_file_edited_while_nothing_ran_is_listed_as_external_by_memory_log(stores: MemoryStores) -> None:
    lessons(stores, "first lesson")
    with open(stores.project_hc.lessons_path, "a", encoding="utf-8") as handle:
        handle.write("- added in an editor\n")
    listed = json.loads(cli("memory", "log", "--json").stdout)
    assert listed[0]["producer"] == "external" and "added in an editor" in listed[0]["summary"]
    assert len(listed) == 2


def test_a_commit_made_by_another_git_tool_is_listed(stores: MemoryStores) -> None:
    """A commit the list does not know (made with plain git tools) makes the list stale: it is rebuilt."""
    from dulwich.objects import Blob, Commit, Tree

    lessons(stores, "first lesson")
    history = stores.recorder.history("project")
    repo = history.repo()
    parent = repo.refs[b"refs/heads/main"]
    blob = Blob.from_string(b"# Lessons\n- written by hand with git\n")
    tree = Tree()
    tree.add(b"lessons.md", 0o100644, blob.id)
    commit = Commit()
    commit.tree, commit.parents = tree.id, [parent]
    commit.author = commit.committer = b"someone <someone@example.com>"
    commit.commit_time = commit.author_time = 2_000_000_000
    commit.commit_timezone = commit.author_timezone = 0
    commit.message = b"lessons.md +1 -1: written by hand with git\n\nProducer: user edit\nScope: project\n"
    for obj in (blob, tree, commit):
        repo.object_store.add_object(obj)
    repo.refs[b"refs/heads/main"] = commit.id
    stores.project_hc.lessons_path.write_bytes(blob.data)  # the disk agrees with the new head
    listed = json.loads(cli("memory", "log", "--json").stdout)
    assert [c["producer"] for c in listed] == ["user edit", "consolidator"]
    assert listed[0]["id"] == commit.id.decode() and listed[0]["files"] == ["lessons.md"]


def test_a_packed_ref_and_a_torn_list_still_give_every_change(stores: MemoryStores) -> None:
    lessons(stores, "first lesson", "second lesson", "third lesson")
    history = stores.recorder.history("project")
    before = [c.id for c in history_ops.log(stores)]
    history.repo().refs.pack_refs(all=True)  # as `git gc` does: the ref file goes, packed-refs holds the head
    assert not (history.git_dir / "refs" / "heads" / "main").exists()
    assert [c["id"] for c in json.loads(cli("memory", "log", "--json").stdout)] == before
    path = history.git_dir / history_index.NAME
    path.write_bytes(path.read_bytes()[:-40])  # a write cut short
    assert [c["id"] for c in json.loads(cli("memory", "log", "--json").stdout)] == before


def test_a_rebuilt_list_is_the_list_written_change_by_change(stores: MemoryStores) -> None:
    lessons(stores, "first lesson", "second lesson")
    stores.project_hc.lessons_path.unlink()
    stores.recorder.record_external("project")
    stores.recorder.flush()
    path = stores.recorder.history("project").git_dir / history_index.NAME
    written = [json.loads(line) for line in path.read_text().splitlines()]
    path.unlink()
    rebuilt = MemoryStores.from_paths(AntonPaths(stores.paths.home, stores.paths.project_dir))
    listed = history_ops.log(rebuilt, scope="project")
    again = [json.loads(line) for line in path.read_text().splitlines()]
    assert [c.producer for c in listed] == ["external", "consolidator", "consolidator"]
    for row in written:
        row["time"] = int(row["time"])  # a commit keeps whole seconds
    assert again == written
