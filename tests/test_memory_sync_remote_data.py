"""Sharing memory with remotes and files that are not what they should be: a private key spread over several lines
and kept local, a remote whose tree holds folders or links, a file that is not UTF-8 on either side, and a managed
clone whose remote commits a link. Real dulwich repositories and real files; the remote's odd commits are made with
dulwich straight into the bare repository, as another tool would."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from anton_tui.memory.engrams.managed import ManagedHippocampus
from anton_tui.memory.sync import syncer as sync
from anton_tui.memory.sync.remote import RemoteError, pull_clone

KEY_BODY = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LpZOa3pV6p2b9pVD0rA1b3kF0hRz1aWcLwq6mJ5Xh3yq9mN8tWv2sDk4pQzR7cVb",
]


def remote_files(bare: Path) -> dict[str, bytes]:
    remote = Repo(str(bare))
    tree = remote[remote[remote.refs[b"refs/heads/main"]].tree]
    return {e.path.decode(): remote[e.sha].data for e in tree.items() if e.mode != 0o040000}


def remote_commit(bare: Path, entries: list[tuple[bytes, int, object]], message: bytes = b"by hand\n") -> bytes:
    """A commit on top of the remote's branch whose tree is `entries` (name, mode, Blob or Tree) as another git tool
    could make it; returns its id."""
    remote = Repo(str(bare))
    parent = remote.refs[b"refs/heads/main"] if b"refs/heads/main" in remote.refs else None
    tree = Tree()
    for name, mode, obj in entries:
        remote.object_store.add_object(obj)  # type: ignore[arg-type]  # a Blob or a Tree
        tree.add(name, mode, obj.id)  # type: ignore[attr-defined]
    remote.object_store.add_object(tree)
    commit = Commit()
    commit.tree, commit.parents = tree.id, [parent] if parent else []
    commit.author = commit.committer = b"someone <someone@example.com>"
    commit.commit_time = commit.author_time = int(time.time())
    commit.commit_timezone = commit.author_timezone = 0
    commit.message = message
    remote.object_store.add_object(commit)
    remote.refs[b"refs/heads/main"] = commit.id
    return commit.id


# ---- a secret over several lines --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lessons.md", "profile.md"])
def test_a_private_key_kept_local_never_reaches_the_remote_not_one_of_its_lines(pair, bare: Path, name: str) -> None:
    a, _b = pair
    hc = a.global_hc
    hc.encode_lesson("a harmless lesson")
    hc.rewrite_identity(["Name: Ada"])
    a.recorder.flush()
    path = hc.base_dir / name
    key = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *KEY_BODY, "-----END RSA PRIVATE KEY-----"])
    with open(path, "a", encoding="utf-8") as handle:  # pasted into the file by hand: no redaction on that path
        handle.write(f"- the deploy key is {key}\n- a lesson after the key\n")
    held = sync.sync(a, "global")
    assert held.status == "secret" and not held.pushed and len(held.secrets) == 1
    hit = held.secrets[0]
    assert hit.file == name and "private key" in hit.kinds and KEY_BODY[0] not in hit.text
    sync.keep_local(a, "global", [hit.entry_id])
    shared = sync.sync(a, "global")
    assert shared.pushed, shared.message
    pushed = remote_files(bare)[name].decode()
    for line in [*KEY_BODY, "BEGIN RSA PRIVATE KEY", "END RSA PRIVATE KEY", "the deploy key"]:
        assert line not in pushed, f"{line!r} reached the remote"
    assert "a lesson after the key" in pushed or name == "profile.md"
    assert KEY_BODY[1] in path.read_text(), "the key stays in this machine's memory"
    again = sync.sync(a, "global")
    assert again.ok and not again.secrets
    assert KEY_BODY[2] not in remote_files(bare)[name].decode()


# ---- what a remote's tree may hold ------------------------------------------------------------------------------


def test_a_folder_or_a_folder_named_like_a_memory_file_in_the_remote_is_ignored_and_said_once(pair, bare: Path) -> None:
    a, b = pair
    a.global_hc.encode_lesson("a shared lesson")
    assert sync.sync(a, "global").pushed
    lessons = Blob.from_string(remote_files(bare)["lessons.md"] + b"- added on the remote\n")
    readme = Blob.from_string(b"# Team notes\n")
    docs = Tree()
    docs.add(b"README.md", 0o100644, readme.id)
    Repo(str(bare)).object_store.add_object(readme)
    remote_commit(bare, [(b"lessons.md", 0o100644, lessons), (b"docs", 0o040000, docs), (b"rules.md", 0o040000, docs)])
    first = sync.sync(b, "global")
    assert first.ok, first.message
    said = " ".join(first.notes)
    assert "docs/ (a folder)" in said and "rules.md/ (a folder)" in said
    assert "added on the remote" in b.global_hc.lessons_path.read_text()
    assert not b.global_hc.rules_path.exists()
    b.global_hc.encode_lesson("a lesson from the server")
    second = sync.sync(b, "global")
    assert second.ok and not any("docs/" in note for note in second.notes), "said once, not at every sync"
    remote = Repo(str(bare))
    tree = remote[remote[remote.refs[b"refs/heads/main"]].tree]
    assert b"docs" in [e.path for e in tree.items()], "the remote's own folder is kept in what is pushed"
    assert sync.sync(a, "global").ok


def test_a_symbolic_link_in_the_remotes_tree_is_never_read_as_memory(pair, bare: Path, tmp_path: Path) -> None:
    a, b = pair
    a.global_hc.encode_lesson("a shared lesson")
    assert sync.sync(a, "global").pushed
    outside = tmp_path / "outside.md"
    outside.write_text("- an outside line that must not become a lesson\n")
    link = Blob.from_string(str(outside).encode())
    remote_commit(bare, [(b"lessons.md", 0o100644, Blob.from_string(remote_files(bare)["lessons.md"])),
                         (b"profile.md", 0o120000, link)])  # fmt: skip
    outcome = sync.sync(b, "global")
    assert outcome.ok and "profile.md (a symbolic link)" in " ".join(outcome.notes)
    assert not b.global_hc.profile_path.exists()
    assert str(outside) not in b.global_hc.lessons_path.read_text()


# ---- files that are not UTF-8 -----------------------------------------------------------------------------------


def test_a_memory_file_that_is_not_utf8_stays_on_its_machine_and_is_said_once(pair, bare: Path) -> None:
    a, b = pair
    a.global_hc.encode_lesson("a shared lesson")
    a.global_hc.encode_rule("answer in English", "always")
    assert sync.sync(a, "global").pushed
    assert sync.sync(b, "global").ok
    broken = a.global_hc.lessons_path.read_bytes() + b"- caf\xe9 latin-1 bytes\n"
    a.global_hc.lessons_path.write_bytes(broken)
    a.global_hc.encode_rule("use uv", "always")  # a readable change beside it is still shared
    outcome = sync.sync(a, "global")
    assert outcome.ok, outcome.message
    assert any("lessons.md is not valid UTF-8" in note for note in outcome.notes)
    assert b"\xe9" not in remote_files(bare)["lessons.md"] and b"use uv" in remote_files(bare)["rules.md"]
    assert a.global_hc.lessons_path.read_bytes() == broken, "left byte for byte"
    assert not any("UTF-8" in note for note in sync.sync(a, "global").notes), "said once"
    before = b.global_hc.lessons_path.read_bytes()
    assert sync.sync(b, "global").ok
    assert b.global_hc.lessons_path.read_bytes() == before and "use uv" in b.global_hc.rules_path.read_text()


def test_a_remote_file_that_is_not_utf8_is_never_written_into_memory(pair, bare: Path) -> None:
    a, b = pair
    a.global_hc.encode_lesson("a shared lesson")
    assert sync.sync(a, "global").pushed
    assert sync.sync(b, "global").ok
    before = b.global_hc.lessons_path.read_bytes()
    remote_commit(bare, [(b"lessons.md", 0o100644, Blob.from_string(before + b"- caf\xe9\n"))])
    outcome = sync.sync(b, "global")
    assert outcome.ok and any("the remote's lessons.md is not valid UTF-8" in n for n in outcome.notes)
    assert b.global_hc.lessons_path.read_bytes() == before
    assert b"\xe9" not in remote_files(bare)["lessons.md"], "this machine's readable file is shared back"


# ---- the entry merge --------------------------------------------------------------------------------------------


def test_twenty_thousand_incoming_entries_merge_in_a_moment() -> None:
    from anton_tui.memory.sync.entry_merge import merge_file

    def lesson(i: int) -> str:
        return f"- Lesson {i}: the export job for region {i % 37} needs batch size {i % 500} <!-- ts:2026-11-01 -->\n"

    base = ("# Lessons\n" + "".join(lesson(i) for i in range(10))).encode()
    ours = base + b"- mine <!-- ts:2026-11-02 -->\n"
    theirs = base + "".join(lesson(i) for i in range(10, 20_010)).encode()
    began = time.perf_counter()
    result = merge_file("lessons.md", base, ours, theirs, ours_time=1, theirs_time=2)
    took = time.perf_counter() - began
    assert result.clean and result.data is not None and result.data.count(b"\n") == 20_012
    assert took < 5.0, f"{took:.1f} s: the merge is not linear in the entries"  # about 0.3 s; it took 30 s


# ---- the managed clone ------------------------------------------------------------------------------------------


def test_a_managed_clone_refuses_an_update_that_commits_a_symbolic_link(tmp_path: Path) -> None:
    work = tmp_path / "admin"
    work.mkdir()
    repo = porcelain.init(str(work))
    (work / "rules.md").write_text("# Rules\n\n## Always\n- Ask before deleting data\n")
    porcelain.add(repo, [str(work / "rules.md")])
    porcelain.commit(repo, message=b"rules", author=b"A <a@example>", committer=b"A <a@example>")
    managed = tmp_path / "managed"
    porcelain.clone(str(work), str(managed), errstream=io.BytesIO())
    outside = tmp_path / "outside.md"
    outside.write_text("# Rules\n\n## Always\n- an outside line that must not become a rule\n")
    (work / "rules.md").unlink()
    os.symlink(outside, work / "rules.md")
    porcelain.add(repo, [str(work / "rules.md")])
    porcelain.commit(repo, message=b"link", author=b"A <a@example>", committer=b"A <a@example>")
    before = (managed / "rules.md").read_bytes()
    with pytest.raises(RemoteError, match="symbolic link"):
        pull_clone(managed)
    assert not (managed / "rules.md").is_symlink() and (managed / "rules.md").read_bytes() == before
    texts = [e.text for e in ManagedHippocampus(managed).get_rules()]
    assert texts == ["Ask before deleting data"]


def test_managed_memory_never_reads_through_a_symbolic_link(tmp_path: Path) -> None:
    managed = tmp_path / "managed"
    managed.mkdir()
    outside = tmp_path / "outside.md"
    outside.write_text("# Rules\n\n## Always\n- an outside line that must not become a rule\n")
    os.symlink(outside, managed / "rules.md")
    hc = ManagedHippocampus(managed)
    assert hc.get_rules() == [] and hc.list_entries("rules") == []
    assert any("symbolic link" in problem.reason for problem in hc.problems())
