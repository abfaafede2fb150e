"""Two machines, one memory: two ANTON_HOME folders share their global memory through a bare repository made here.

Real dulwich repositories, real files, real locks; the only thing staged is the remote disappearing mid-push."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from anton_tui.memory.history import ops as history_ops
from anton_tui.memory.history.origin import producing
from anton_tui.memory.stores import MemoryStores
from anton_tui.memory.sync import syncer as sync
from tests.sync_machines import machine


def lessons(stores: MemoryStores) -> list[str]:
    return sorted(e.text for e in stores.global_hc.get_lessons())


def rules(stores: MemoryStores) -> list[tuple[str, str]]:
    return sorted((e.kind, e.text) for e in stores.global_hc.get_rules())


def test_different_and_same_entries_end_equal_on_both_machines(pair: tuple[MemoryStores, MemoryStores]) -> None:
    a, b = pair
    a.global_hc.encode_lesson("laptop: the VPN drops after an hour")
    a.global_hc.encode_rule("use uv for environments", "always")
    a.global_hc.encode_lesson("both: the API pages by 100")
    b.global_hc.encode_lesson("server: disk fills at night")
    b.global_hc.encode_rule("never restart the db by hand", "never")
    b.global_hc.encode_lesson("both: the API pages by 100")

    first = sync.sync(a, "global")
    assert first.status == "synced" and first.pushed
    second = sync.sync(b, "global")
    assert second.status == "synced" and second.merged and second.pushed
    third = sync.sync(a, "global")
    assert third.ok and third.merged and not third.pushed

    expected = ["both: the API pages by 100", "laptop: the VPN drops after an hour", "server: disk fills at night"]
    assert lessons(a) == lessons(b) == expected
    assert rules(a) == rules(b) == [("always", "use uv for environments"), ("never", "never restart the db by hand")]
    assert a.global_hc.lessons_path.read_bytes() == b.global_hc.lessons_path.read_bytes()
    assert a.global_hc.rules_path.read_bytes() == b.global_hc.rules_path.read_bytes()
    # a further sync with nothing new changes nothing and pushes nothing
    again = sync.sync(b, "global")
    assert again.status == "up to date" and not again.pushed


def test_the_merge_is_a_change_of_producer_sync_with_both_parents(pair: tuple[MemoryStores, MemoryStores]) -> None:
    a, b = pair
    a.global_hc.encode_lesson("from the laptop")
    sync.sync(a, "global")
    b.global_hc.encode_lesson("from the server")
    sync.sync(b, "global")
    newest = history_ops.log(b, "global")[0]
    assert newest.producer == "sync"
    history = b.recorder.history("global")
    assert len(history.repo()[newest.id.encode()].parents) == 2
    # the laptop's shared change is listed in the server's log too
    assert any("shared from" in change.summary for change in history_ops.log(b, "global"))
    # and the merge can be undone like any change
    undone = history_ops.undo(b, newest.id[:8])
    assert undone.done and "from the laptop" not in [e.text for e in b.global_hc.get_lessons()]


def test_a_deletion_on_one_side_and_an_edit_on_the_other(pair: tuple[MemoryStores, MemoryStores]) -> None:
    a, b = pair
    a.global_hc.encode_lesson("keep me")
    a.global_hc.encode_lesson("delete me")
    a.global_hc.encode_lesson("edit me")
    sync.sync(a, "global")
    sync.sync(b, "global")
    assert lessons(b) == ["delete me", "edit me", "keep me"]
    gone = next(e for e in a.global_hc.get_lessons() if e.text == "delete me")
    a.global_hc.delete_entry("lessons", gone.id)
    edited = next(e for e in b.global_hc.get_lessons() if e.text == "edit me")
    b.global_hc.update_entry("lessons", edited.id, "edit me: edited on the server")
    sync.sync(a, "global")
    sync.sync(b, "global")
    sync.sync(a, "global")
    assert lessons(a) == lessons(b) == ["edit me: edited on the server", "keep me"]


def test_both_sync_at_once_and_nothing_is_lost(pair: tuple[MemoryStores, MemoryStores]) -> None:
    a, b = pair
    for i in range(5):
        a.global_hc.encode_lesson(f"laptop lesson {i}")
        b.global_hc.encode_lesson(f"server lesson {i}")
    outcomes: list[sync.SyncOutcome] = []
    start = threading.Barrier(2)

    def run(stores: MemoryStores) -> None:
        start.wait()
        outcomes.append(sync.sync(stores, "global"))

    threads = [threading.Thread(target=run, args=(s,)) for s in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(o.ok for o in outcomes), [o.message for o in outcomes]
    for stores in (a, b, a):
        assert sync.sync(stores, "global").ok
    expected = sorted([f"laptop lesson {i}" for i in range(5)] + [f"server lesson {i}" for i in range(5)])
    assert lessons(a) == lessons(b) == expected


def test_writes_during_sync_on_both_sides_converge(pair: tuple[MemoryStores, MemoryStores]) -> None:
    a, b = pair
    stop = threading.Event()

    def write(stores: MemoryStores, name: str) -> None:
        i = 0
        while not stop.is_set() and i < 15:
            with producing("memorize"):
                stores.global_hc.encode_lesson(f"{name} note {i}")
            i += 1

    writers = [threading.Thread(target=write, args=(s, n)) for s, n in ((a, "laptop"), (b, "server"))]
    for thread in writers:
        thread.start()
    for _ in range(3):
        assert sync.sync(a, "global").ok
        assert sync.sync(b, "global").ok
    for thread in writers:
        thread.join(60)
    stop.set()
    for stores in (a, b, a):
        assert sync.sync(stores, "global").ok
    expected = sorted([f"laptop note {i}" for i in range(15)] + [f"server note {i}" for i in range(15)])
    assert lessons(a) == lessons(b) == expected


def test_a_remote_that_goes_away_mid_push_leaves_both_sides_intact(pair, bare: Path, tmp_path: Path) -> None:
    a, b = pair
    a.global_hc.encode_lesson("first, shared")
    assert sync.sync(a, "global").pushed
    remote_head = (bare / "refs" / "heads" / "main").read_bytes()
    a.global_hc.encode_lesson("second, written before the network dropped")
    before = a.global_hc.lessons_path.read_bytes()
    moved = tmp_path / "unplugged.git"

    def unplug() -> None:
        shutil.move(str(bare), str(moved))

    failed = sync.sync(a, "global", before_push=unplug)
    assert failed.status == "failed" and "next sync" in failed.message
    assert a.global_hc.lessons_path.read_bytes() == before
    shutil.move(str(moved), str(bare))
    assert (bare / "refs" / "heads" / "main").read_bytes() == remote_head  # the remote was not half-written
    retried = sync.sync(a, "global")
    assert retried.status == "synced" and retried.pushed
    assert sync.sync(b, "global").ok
    assert lessons(b) == ["first, shared", "second, written before the network dropped"]
    assert sync.last_outcome(a, "global")["status"] == "synced"


def test_a_secret_stops_the_push_and_names_the_entry(pair, bare: Path) -> None:
    a, _b = pair
    a.global_hc.encode_lesson("a harmless lesson")
    a.recorder.flush()
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with open(a.global_hc.lessons_path, "a", encoding="utf-8") as handle:
        handle.write(f"- the deploy token is {key}\n")  # typed into the file by hand: no redaction on that path
    outcome = sync.sync(a, "global")
    assert outcome.status == "secret" and not outcome.pushed
    assert len(outcome.secrets) == 1
    hit = outcome.secrets[0]
    assert hit.file == "lessons.md" and key not in hit.text and "github token" in hit.kinds[0].lower()
    assert not (bare / "refs" / "heads" / "main").exists()  # nothing left the machine
    sync.keep_local(a, "global", [hit.entry_id])
    shared = sync.sync(a, "global")
    assert shared.pushed
    from dulwich.repo import Repo

    remote = Repo(str(bare))
    tree = remote[remote[remote.refs[b"refs/heads/main"]].tree]
    pushed = remote[tree[b"lessons.md"][1]].data.decode()
    assert "harmless" in pushed and "deploy token" not in pushed
    assert "deploy token" in a.global_hc.lessons_path.read_text()


def test_an_undecidable_merge_writes_nothing_until_resolved(pair) -> None:
    a, b = pair
    for stores in (a, b):
        stores.global_hc.lessons_path.parent.mkdir(parents=True, exist_ok=True)
    a.global_hc.lessons_path.write_text("# Lessons\n- shared <!-- ts:2026-11-01 -->\n")
    sync.sync(a, "global")
    sync.sync(b, "global")
    a.global_hc.lessons_path.write_text("# Lessons from the laptop\n- shared <!-- ts:2026-11-01 -->\n")
    b.global_hc.lessons_path.write_text("# Lessons from the server\n- shared <!-- ts:2026-11-01 -->\n")
    assert sync.sync(a, "global").pushed
    before = b.global_hc.lessons_path.read_bytes()
    outcome = sync.sync(b, "global")
    assert outcome.status == "conflicts" and not outcome.pushed
    assert b.global_hc.lessons_path.read_bytes() == before
    assert [c.file for c in sync.pending(b, "global")] == ["lessons.md"]
    resolved = sync.resolve(b, "global", "theirs")
    assert resolved.ok and not sync.pending(b, "global")
    assert b.global_hc.lessons_path.read_text().startswith("# Lessons from the laptop")


def test_no_remote_and_unreachable_addresses_are_reported(tmp_path: Path) -> None:
    stores = machine(tmp_path, "alone")
    assert sync.sync(stores, "global").status == "no remote"
    sync.add_remote(stores, "global", str(tmp_path / "nowhere.git"))
    outcome = sync.sync(stores, "global")
    assert outcome.status == "failed" and "nowhere.git" in outcome.message
    assert sync.shared_scopes(stores) == {"global": str(tmp_path / "nowhere.git")}
    assert sync.remove_remote(stores, "global") and sync.shared_scopes(stores) == {}


SHARED_SCOPES = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from anton_tui.memory.sync import syncer as sync
    from anton_tui.memory.stores import MemoryStores
    from anton_tui.paths import AntonPaths

    stores = MemoryStores.from_paths(AntonPaths(Path(sys.argv[1]), Path(sys.argv[2])))
    print(sync.shared_scopes(stores), "dulwich" in sys.modules)
    """
)


def shared_scopes_in_a_new_process(stores: MemoryStores) -> str:
    paths = stores.paths
    args = [sys.executable, "-c", SHARED_SCOPES, str(paths.home), str(paths.project_dir)]
    result = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_history_without_a_remote_is_known_to_share_nothing_without_loading_git(tmp_path: Path) -> None:
    stores = machine(tmp_path, "alone")
    stores.paths.global_memory.mkdir(parents=True, exist_ok=True)
    (stores.paths.global_memory / "lessons.md").write_text("# Lessons\n- Check the units first\n")
    stores.recorder.start()
    stores.recorder.flush()
    assert (stores.recorder.history("global").git_dir / "HEAD").exists()
    assert shared_scopes_in_a_new_process(stores) == "{} False", "the app's start-up opens no repository for this"
    sync.add_remote(stores, "global", str(tmp_path / "team.git"))
    assert shared_scopes_in_a_new_process(stores) == f"{{'global': '{tmp_path / 'team.git'}'}} True"


def test_an_https_style_remote_uses_the_users_git_credential_helper(pair, tmp_path: Path, monkeypatch) -> None:
    """A smart-HTTP git server on loopback that wants a password; `git credential fill` (the real git, with a helper
    configured for this test) supplies it, as the user's keychain or store would."""
    import base64
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from dulwich.repo import Repo
    from dulwich.server import DictBackend
    from dulwich.web import make_wsgi_chain

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    served = tmp_path / "served.git"
    served.mkdir()
    Repo.init_bare(str(served)).close()
    app = make_wsgi_chain(DictBackend({"/team.git": Repo(str(served))}))
    token = "Basic " + base64.b64encode(b"ada:s3cret-pass").decode()
    asked: list[str] = []

    def guarded(environ, start_response):
        asked.append(environ.get("HTTP_AUTHORIZATION", ""))
        if environ.get("HTTP_AUTHORIZATION") != token:
            start_response("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="team"'), ("Content-Length", "0")])
            return [b""]
        return app(environ, start_response)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = make_server("127.0.0.1", 0, guarded, handler_class=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    helper = tmp_path / "gitconfig"
    helper.write_text('[credential]\n\thelper = "!f() { echo username=ada; echo password=s3cret-pass; }; f"\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(helper))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    try:
        a, b = pair
        url = f"http://127.0.0.1:{server.server_address[1]}/team.git"
        for stores in (a, b):
            sync.add_remote(stores, "global", url)
        a.global_hc.encode_lesson("shared over http")
        first = sync.sync(a, "global")
        assert first.pushed, first.message
        assert sync.sync(b, "global").ok
        assert lessons(b) == ["shared over http"]
        assert token in asked and "" in asked  # refused without, accepted with the helper's password
    finally:
        server.shutdown()


@pytest.mark.parametrize("seed", [9, 11, 13])
def test_syncs_settle_both_files_equal_and_nothing_more_to_push(pair, seed: int) -> None:
    """Deletions and insertions anywhere on both sides (the first entry too): after a few rounds both files are the
    same bytes and a further sync pushes nothing (no endless exchange of reorderings)."""
    import random

    rng = random.Random(seed)
    a, b = pair
    base = [f"lesson {i} about topic {rng.randint(0, 9)}" for i in range(40)]

    def write(stores: MemoryStores, texts: list[str]) -> None:
        stores.global_hc.lessons_path.parent.mkdir(parents=True, exist_ok=True)
        stores.global_hc.lessons_path.write_text("".join(f"- {t} <!-- ts:2026-11-01 -->\n" for t in texts))

    write(a, base)
    sync.sync(a, "global")
    sync.sync(b, "global")
    for stores, name in ((a, "laptop"), (b, "server")):
        texts = [t for t in base if t not in set(rng.sample(base, 4))]
        for k in range(5):
            texts.insert(rng.randint(0, len(texts)), f"{name} new {k}")
        write(stores, texts)
    for stores in (a, b, a, b):
        assert sync.sync(stores, "global").ok
    assert a.global_hc.lessons_path.read_bytes() == b.global_hc.lessons_path.read_bytes()
    for stores in (a, b):
        again = sync.sync(stores, "global")
        assert again.status == "up to date" and not again.pushed


def test_an_ssh_remote_goes_through_the_ssh_command_git_would_use(pair, bare: Path, tmp_path: Path, monkeypatch) -> None:
    """`GIT_SSH_COMMAND` names a stand-in for ssh that runs the remote command here (the real git-upload-pack and
    git-receive-pack): the whole ssh transport is exercised without a network."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    fake_ssh = tmp_path / "fake-ssh"
    calls = tmp_path / "ssh-calls.txt"
    fake_ssh.write_text(f'#!/bin/sh\nfor last; do :; done\necho "$@" >> {calls}\nexec sh -c "$last"\n')
    fake_ssh.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(fake_ssh))
    a, b = pair
    url = f"ssh://team-server{bare}"
    for stores in (a, b):
        sync.add_remote(stores, "global", url)
    a.global_hc.encode_lesson("shared over ssh")
    assert sync.sync(a, "global").pushed
    assert sync.sync(b, "global").ok
    assert lessons(b) == ["shared over ssh"]
    used = calls.read_text()
    assert "team-server" in used and "git-receive-pack" in used and "git-upload-pack" in used


def test_an_entry_edited_on_both_sides_keeps_the_newer_and_the_history_names_the_other(pair) -> None:
    a, b = pair
    a.global_hc.lessons_path.parent.mkdir(parents=True, exist_ok=True)
    a.global_hc.lessons_path.write_text("- the API pages by 100 <!-- ts:2026-11-01 -->\n")
    sync.sync(a, "global")
    sync.sync(b, "global")
    a.global_hc.lessons_path.write_text("- the API pages by 100 items <!-- ts:2026-11-03 -->\n")
    b.global_hc.lessons_path.write_text("- the API pages by 100 rows <!-- ts:2026-11-05 -->\n")
    sync.sync(a, "global")
    outcome = sync.sync(b, "global")
    assert outcome.ok and any("100 items" in note for note in outcome.notes)
    sync.sync(a, "global")
    for stores in (a, b):
        assert lessons(stores) == ["the API pages by 100 rows"]
    merge = next(c for c in history_ops.log(b, "global") if c.producer == "sync")
    assert "the other was: - the API pages by 100 items" in merge.why


def test_resolving_a_conflict_says_which_version_was_chosen_not_that_it_was_newer(pair) -> None:
    a, b = pair
    for stores in (a, b):
        stores.recorder.history("global").clock = lambda: 1_800_000_000.0  # neither side is newer
        stores.global_hc.lessons_path.parent.mkdir(parents=True, exist_ok=True)
    a.global_hc.lessons_path.write_text("# Lessons\n- the VPN drops after an hour <!-- ts:2026-11-01 -->\n")
    sync.sync(a, "global")
    sync.sync(b, "global")
    a.global_hc.lessons_path.write_text("# Lessons\n- the VPN drops after two hours <!-- ts:2026-11-01 -->\n")
    b.global_hc.lessons_path.write_text("# Lessons\n- the VPN drops after ten minutes <!-- ts:2026-11-01 -->\n")
    assert sync.sync(a, "global").pushed
    assert sync.sync(b, "global").status == "conflicts"
    resolved = sync.resolve(b, "global", "theirs")
    assert resolved.ok
    assert lessons(b) == ["the VPN drops after two hours"]
    assert any("kept the version from the other side, as chosen" in note for note in resolved.notes), resolved.notes
    assert not any("newer" in note for note in resolved.notes), resolved.notes
