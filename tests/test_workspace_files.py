"""The workspace file list behind `@` mentions: gitignore rules, the cap, the cache, and the fuzzy ranking."""

from __future__ import annotations

import time
from pathlib import Path

from anton_tui.agent.workspace_files import WorkspaceFiles, list_files, rank


def make(root: Path, *paths: str) -> None:
    for path in paths:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path, encoding="utf-8")


def test_listing_leaves_out_what_gitignore_ignores(tmp_path: Path) -> None:
    make(tmp_path, "README.md", "src/app.py", "src/app.pyc", "build/out.bin", "data/raw/big.csv", "data/keep.csv",
         "docs/notes/draft.md", "docs/guide.md", ".git/config", ".anton/memory/rules.md", "secret.key")  # fmt: skip
    (tmp_path / ".gitignore").write_text("*.pyc\nbuild/\n/data/raw\n", encoding="utf-8")
    (tmp_path / "docs" / ".gitignore").write_text("notes/\n", encoding="utf-8")
    (tmp_path / ".git" / "info").mkdir()
    (tmp_path / ".git" / "info" / "exclude").write_text("*.key\n", encoding="utf-8")

    listing = list_files(tmp_path)

    assert listing.files == (".gitignore", "README.md", "data/keep.csv", "docs/.gitignore", "docs/guide.md",
                             "src/app.py")  # fmt: skip
    assert not listing.capped


def test_an_ignored_folder_is_not_entered(tmp_path: Path) -> None:
    make(tmp_path, "main.py", *(f"node_modules/pkg{i}/index.js" for i in range(50)))
    (tmp_path / ".gitignore").write_text("node_modules\n", encoding="utf-8")
    (tmp_path / "node_modules" / "pkg0").chmod(0)  # unreadable: the walk would fail or skip it, never list it
    try:
        assert list_files(tmp_path).files == (".gitignore", "main.py")
    finally:
        (tmp_path / "node_modules" / "pkg0").chmod(0o755)


def test_a_big_tree_is_cut_at_the_cap(tmp_path: Path) -> None:
    make(tmp_path, *(f"f{i:03}.txt" for i in range(30)))
    listing = list_files(tmp_path, limit=10)
    assert len(listing.files) == 10 and listing.capped
    make(tmp_path, *(f"empty/d{i:03}/.keep" for i in range(40)))
    (tmp_path / ".gitignore").write_text(".keep\n", encoding="utf-8")
    scanned = list_files(tmp_path, scan_limit=50)  # 32 entries at the top, then folders holding nothing listed
    assert scanned.capped and len(scanned.files) == 31  # the 30 files and .gitignore


def test_ranking_prefers_the_file_name_and_exact_text(tmp_path: Path) -> None:
    files = ("README.md", "docs/readme_old.txt", "src/reader/main.py", "src/models/user.py", "tests/test_user.py")
    assert rank("readme", files)[:2] == ["README.md", "docs/readme_old.txt"]
    assert rank("user", files)[:2] == ["src/models/user.py", "tests/test_user.py"]
    assert rank("mdlusr", files)[0] == "src/models/user.py", "letters in order, not side by side"
    assert rank("zzzz", files) == []
    assert rank("", files, limit=2) == ["README.md", "docs/readme_old.txt"]


def test_the_cache_is_reused_while_fresh_and_walked_again_when_the_folder_changes(tmp_path: Path) -> None:
    make(tmp_path, "sub/a.txt")
    files = WorkspaceFiles(tmp_path, fresh_for=60)
    assert files.listing().files == ("sub/a.txt",)
    make(tmp_path, "sub/b.txt")  # a change below the top folder: the cached listing is given while fresh
    assert files.listing().files == ("sub/a.txt",)
    assert files.listing(refresh=True).files == ("sub/a.txt", "sub/b.txt")
    time.sleep(0.01)
    make(tmp_path, "c.txt")  # a new top-level entry: walked again at once
    assert files.listing().files == ("c.txt", "sub/a.txt", "sub/b.txt")
    stale = WorkspaceFiles(tmp_path, fresh_for=0)
    first = stale.listing()
    make(tmp_path, "sub/d.txt")
    assert stale.listing() is first, "an old listing is given at once ..."
    stale.settle(5)
    assert "sub/d.txt" in stale.listing().files, "... while the tree is walked again for the next call"
