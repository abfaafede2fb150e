"""`anton-tui memory remote|sync|resolve` in real processes: two homes share their global memory through a bare
repository, and a managed memory folder that is a clone is pulled, never pushed."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from dulwich import porcelain
from dulwich.repo import Repo


def cli(home: Path, project: Path, *args: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, ANTON_HOME=str(home), ANTON_PROJECT_DIR=str(project), **(extra or {}))
    return subprocess.run([sys.executable, "-m", "anton_tui", "memory", *args], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip


def test_two_homes_share_their_global_memory_from_the_shell(tmp_path: Path, anton_home: Path) -> None:
    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    homes = {}
    for name, lesson in (("a", "- from a <!-- ts:2026-11-20 -->\n"), ("b", "- from b <!-- ts:2026-11-21 -->\n")):
        home, project = tmp_path / name / "home", tmp_path / name / "project"
        (home / "memory").mkdir(parents=True)
        project.mkdir(parents=True)
        (home / "memory" / "lessons.md").write_text(lesson)
        homes[name] = (home, project)
        added = cli(home, project, "remote", "add", "global", str(bare))
        assert added.returncode == 0 and str(bare) in added.stdout
    listed = cli(*homes["a"], "remote", "list")
    assert f"global   {bare}" in listed.stdout
    for name in ("a", "b", "a"):
        done = cli(*homes[name], "sync")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "global: synced" in done.stdout or "global: up to date" in done.stdout
    a = (homes["a"][0] / "memory" / "lessons.md").read_text()
    b = (homes["b"][0] / "memory" / "lessons.md").read_text()
    assert a == b and "from a" in a and "from b" in a
    log = cli(*homes["b"], "log", "--scope", "global")
    assert " sync " in log.stdout


def test_a_sync_without_a_remote_says_how_to_add_one(tmp_path: Path, anton_home: Path, project_dir: Path) -> None:
    done = cli(anton_home, project_dir, "sync")
    assert done.returncode == 1 and "remote add" in done.stdout


def test_a_managed_clone_is_pulled_and_never_pushed(tmp_path: Path, anton_home: Path, project_dir: Path) -> None:
    upstream = tmp_path / "admin.git"
    work = tmp_path / "admin-work"
    work.mkdir()
    repo = porcelain.init(str(work))
    (work / "rules.md").write_text("# Rules\n\n## Always\n- Ask before deleting data <!-- ts:2026-11-01 -->\n")
    porcelain.add(repo, [str(work / "rules.md")])
    porcelain.commit(repo, message=b"first rule", author=b"Admin <a@example>", committer=b"Admin <a@example>")
    porcelain.clone(str(work), str(upstream), bare=True, errstream=io.BytesIO())
    managed = tmp_path / "managed"
    porcelain.clone(str(upstream), str(managed), errstream=io.BytesIO())
    # the administrator adds a rule upstream
    pusher = tmp_path / "admin-2"
    porcelain.clone(str(upstream), str(pusher), errstream=io.BytesIO())
    (pusher / "rules.md").write_text((pusher / "rules.md").read_text() + "- Use the staging db <!-- ts:2026-11-02 -->\n")
    porcelain.add(str(pusher), [str(pusher / "rules.md")])
    porcelain.commit(str(pusher), message=b"second rule", author=b"Admin <a@example>", committer=b"Admin <a@example>")
    porcelain.push(str(pusher), str(upstream), "refs/heads/master", errstream=io.BytesIO())
    upstream_head = Repo(str(upstream)).head()
    extra = {"ANTON_MANAGED_MEMORY": str(managed)}
    listed = cli(anton_home, project_dir, "remote", "list", extra=extra)
    assert "managed" in listed.stdout and "read-only" in listed.stdout
    done = cli(anton_home, project_dir, "sync", extra=extra)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "managed: synced" in done.stdout
    assert "Use the staging db" in (managed / "rules.md").read_text()
    assert Repo(str(upstream)).head() == upstream_head  # nothing pushed


def test_memory_sync_leaves_no_pack_file_open_for_python_to_close_at_exit(tmp_path: Path, anton_home: Path,
                                                                          monkeypatch) -> None:  # fmt: skip
    """Packs still open when the command returns are closed by dulwich's finalisers while Python shuts down, which
    prints `Exception ignored in: <function Pack.__del__>` tracebacks after a successful sync."""
    import gc

    from dulwich.pack import Pack

    from anton_tui.memory_cli import run

    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    homes = []
    for name in ("a", "b"):
        home, project = tmp_path / name / "home", tmp_path / name / "project"
        (home / "memory").mkdir(parents=True)
        project.mkdir(parents=True)
        assert cli(home, project, "remote", "add", "global", str(bare)).returncode == 0
        homes.append((home, project))
    for round_ in range(3):  # each side takes in the other's packs
        for home, project in homes:
            with (home / "memory" / "lessons.md").open("a") as lessons:
                lessons.write(f"- lesson {round_} from {home.parent.name} <!-- ts:2026-11-2{round_} -->\n")
            monkeypatch.setenv("ANTON_HOME", str(home))
            assert run(["sync", "global"], project) == 0
    gc.collect()
    here = str(tmp_path)
    open_packs = [o for o in gc.get_objects() if isinstance(o, Pack) and here in repr(o)]  # (this test's, not others')
    assert open_packs == []


def test_a_push_held_back_for_a_secret_names_the_cli_way_to_keep_it_local_and_log_never_shows_the_key(
    tmp_path: Path, anton_home: Path
) -> None:
    key = "sk-ant-api03-" + "Q7x9" * 20
    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    home, project = tmp_path / "a" / "home", tmp_path / "a" / "project"
    (home / "memory").mkdir(parents=True)
    project.mkdir(parents=True)
    (home / "memory" / "lessons.md").write_text(
        f"# Lessons\n- the staging API takes {key} <!-- ts:2026-11-20 -->\n- retry on 429 <!-- ts:2026-11-20 -->\n"
    )
    assert cli(home, project, "remote", "add", "global", str(bare)).returncode == 0
    held = cli(home, project, "sync", "global")
    assert held.returncode == 1
    assert "nothing was pushed" in held.stdout
    assert "(edit the entry, or keep it local)" not in held.stdout and "/memory sync keep-local" not in held.stdout
    assert "`anton-tui memory sync global --keep-local`" in held.stdout
    assert str(home / "memory") in held.stdout
    kept = cli(home, project, "sync", "global", "--keep-local")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "1 entry kept on this machine only" in kept.stdout
    remote = Repo(str(bare))
    tree = remote[remote[remote.refs[b"refs/heads/main"]].tree]
    pushed = remote[tree[b"lessons.md"][1]].data.decode()
    assert "retry on 429" in pushed and key not in pushed
    log = cli(home, project, "log")
    assert log.returncode == 0 and "lessons.md" in log.stdout
    assert key not in log.stdout and key[:20] not in log.stdout
    change = log.stdout.split()[0]
    shown = cli(home, project, "show", change)
    assert "retry on 429" in shown.stdout and key not in shown.stdout


def test_sharing_global_names_its_files_first_and_can_leave_the_profile_on_this_machine(
    tmp_path: Path, anton_home: Path
) -> None:
    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    home, project = tmp_path / "a" / "home", tmp_path / "a" / "project"
    (home / "memory").mkdir(parents=True)
    project.mkdir(parents=True)
    (home / "memory" / "lessons.md").write_text("# Lessons\n- retry on 429 <!-- ts:2026-11-20 -->\n")
    (home / "memory" / "profile.md").write_text("# Profile\n- Name: Dana, lives in Lisbon\n")
    with_profile = cli(home, project, "remote", "add", "global", str(bare))
    assert "Files it shares: rules.md, lessons.md, profile.md." in with_profile.stdout
    added = cli(home, project, "remote", "add", "global", str(bare), "--without-profile")
    assert added.returncode == 0, added.stdout + added.stderr
    assert "Files it shares: rules.md, lessons.md." in added.stdout
    assert f"global   {bare} (rules.md, lessons.md)" in cli(home, project, "remote", "list").stdout
    done = cli(home, project, "sync", "global")
    assert done.returncode == 0, done.stdout + done.stderr
    remote = Repo(str(bare))
    tree = remote[remote[remote.refs[b"refs/heads/main"]].tree]
    assert b"profile.md" not in tree
    assert "retry on 429" in remote[tree[b"lessons.md"][1]].data.decode()
    assert (home / "memory" / "profile.md").read_text() == "# Profile\n- Name: Dana, lives in Lisbon\n"
