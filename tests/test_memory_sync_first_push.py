"""The first push of a long memory file to an empty remote: the file is judged for secrets as a whole first, and
entry by entry only when something is found, so a secret anywhere in it still stops the push and names its entry.

Real dulwich repositories, real files and locks, as in `test_memory_sync`."""

from __future__ import annotations

from pathlib import Path

import pytest

from anton_tui.memory.stores import MemoryStores
from anton_tui.memory.sync import syncer as sync
from anton_tui.paths import AntonPaths

KEY = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq3\n\nZm9vYmFyYmF6cXV4\n-----END RSA PRIVATE KEY-----\n"


@pytest.fixture
def laptop(tmp_path: Path) -> tuple[MemoryStores, Path]:
    from dulwich.repo import Repo

    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    (tmp_path / "project").mkdir(exist_ok=True)
    stores = MemoryStores.from_paths(AntonPaths(tmp_path / "home", tmp_path / "project"))
    sync.add_remote(stores, "global", str(bare))
    stores.global_hc.lessons_path.parent.mkdir(parents=True, exist_ok=True)
    return stores, bare


def lessons(count: int) -> list[str]:
    return ["# Lessons\n"] + [
        f"- Lesson {i}: the export for region {i % 37} needs batch {i % 500}\n" for i in range(count)
    ]


def pushed_lessons(bare: Path) -> bytes | None:
    from dulwich.repo import Repo

    with Repo(str(bare)) as remote:
        try:
            head = remote.refs[b"refs/heads/main"]
        except KeyError:
            return None
        tree = remote[remote[head].tree]
        return remote[tree[b"lessons.md"][1]].data


@pytest.mark.parametrize("at", [1, 1500, 3000])
def test_a_secret_anywhere_in_a_long_first_push_stops_it_and_names_its_entry(laptop, at: int) -> None:
    stores, bare = laptop
    lines = lessons(3000)
    lines.insert(at, f"- the deploy token is {KEY}\n")
    stores.global_hc.lessons_path.write_text("".join(lines))

    outcome = sync.sync(stores, "global")
    assert outcome.status == "secret" and not outcome.pushed
    [hit] = outcome.secrets
    assert hit.file == "lessons.md" and hit.line == at + 1 and "deploy token" in hit.text and KEY not in hit.text
    assert pushed_lessons(bare) is None  # nothing left the machine


def test_a_key_pasted_across_lines_under_a_lesson_is_one_entry_held_back_whole(laptop) -> None:
    stores, bare = laptop
    lines = lessons(2000)
    lines.insert(1200, "- the server key, for the record:\n" + PEM)
    stores.global_hc.lessons_path.write_text("".join(lines))

    outcome = sync.sync(stores, "global")
    assert outcome.status == "secret"
    [hit] = outcome.secrets
    assert hit.line == 1201 and "server key" in hit.text
    sync.keep_local(stores, "global", [hit.entry_id])
    assert sync.sync(stores, "global").pushed
    pushed = pushed_lessons(bare)
    assert pushed is not None and b"server key" not in pushed and b"PRIVATE KEY" not in pushed and b"Zm9v" not in pushed
    assert pushed.count(b"\n- Lesson ") == 2000  # every other entry went


def test_a_long_clean_first_push_sends_the_file_as_it_is_and_records_it_first(laptop) -> None:
    stores, bare = laptop
    text = "".join(lessons(5000))
    stores.global_hc.lessons_path.write_text(text)

    outcome = sync.sync(stores, "global")
    assert outcome.status == "synced" and outcome.pushed and not outcome.secrets
    assert pushed_lessons(bare) == text.encode()
    changes = stores.recorder.log("global")
    assert changes and changes[-1].producer == "external" and "lessons.md +5001 -0" in changes[-1].summary
    assert sync.sync(stores, "global").status == "up to date"
