"""Installing skills from a folder or a git repository (a real local repository, cloned with git)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from anton_tui.memory.skills.install import InstallError, fetched, find_skills, install
from anton_tui.memory.skills.store import SkillStore


def write_skill(folder: Path, name: str, description: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n1. Do it.\n")
    return folder


def git_repo(path: Path) -> str:
    write_skill(path / "skills" / "lint-python", "lint-python", "Lint Python files")
    (path / "skills" / "lint-python" / "scripts").mkdir()
    (path / "skills" / "lint-python" / "scripts" / "run.sh").write_text("ruff check .\n")
    write_skill(path / "skills" / "release-notes", "release-notes", "Write release notes")
    broken = path / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no front matter\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "skills"]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path.as_uri()


def test_install_from_a_git_repository_with_several_skills(tmp_path: Path) -> None:
    url = git_repo(tmp_path / "repo")
    store = SkillStore(tmp_path / "home" / "skills")
    with fetched(url) as folder:
        clone = folder
        candidates, problems = find_skills(folder)
        assert [c.label for c in candidates] == ["lint-python", "release-notes"]
        assert len(problems) == 1 and "broken" in problems[0] and "front matter" in problems[0]
        install(store, candidates[0])
    assert not clone.exists(), "the temporary clone is removed"
    skill = store.load("lint-python")
    assert skill.description == "Lint Python files" and skill.code_files == {"run.sh": "ruff check .\n"}
    assert (store.root / "lint-python" / "SKILL.md").read_bytes() == (
        tmp_path / "repo" / "skills" / "lint-python" / "SKILL.md"
    ).read_bytes()
    assert not (store.root / "lint-python" / ".git").exists()

    with fetched(url) as folder, pytest.raises(InstallError, match="already exists"):
        install(store, find_skills(folder)[0][0])


def test_install_from_a_single_skill_folder(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "one", "Chart Sales", "Chart sales")
    store = SkillStore(tmp_path / "home" / "skills")
    with fetched(str(folder)) as found:
        [candidate], problems = find_skills(found)
    assert candidate.label == "chart-sales" and not problems
    install(store, candidate)
    assert [s["label"] for s in store.list_summaries()] == ["chart-sales"]


@pytest.mark.parametrize("source", ["file:///nonexistent/skills.git", "https://127.0.0.1:9/nothing.git"])
def test_a_bad_url_gives_a_clear_error_and_writes_nothing(tmp_path: Path, source: str) -> None:
    home = tmp_path / "home"
    with pytest.raises(InstallError, match="Could not clone") as caught:
        with fetched(source):
            pass
    assert "Nothing was installed" in str(caught.value)
    assert not home.exists()


def test_a_path_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="not a folder"):
        with fetched(str(tmp_path / "missing")):
            pass


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda skill: (skill / "loop").symlink_to("loop"), "leads back to itself (a loop)"),
        (lambda skill: (skill / "again").symlink_to("."), "a link loop"),
        (lambda skill: os.mkfifo(skill / "pipe"), "pipe is a named pipe, not a file"),
    ],
    ids=["a link to itself", "a link to its own folder", "a named pipe"],
)
def test_a_skill_holding_a_link_loop_or_a_named_pipe_is_refused_saying_why(tmp_path: Path, make, reason: str) -> None:
    skill = write_skill(tmp_path / "odd", "odd", "An odd skill")
    make(skill)
    store = SkillStore(tmp_path / "home" / "skills")
    candidates, problems = find_skills(skill)
    assert candidates == [] and len(problems) == 1 and reason in problems[0] and "None" not in problems[0]
    assert not store.root.exists()


def test_a_skill_bigger_than_the_cap_is_refused_even_when_its_files_are_sparse(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "big", "big", "A big skill")
    with open(skill / "data.bin", "wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # 200 MB that take no room on disk
    store = SkillStore(tmp_path / "home" / "skills")
    candidates, problems = find_skills(skill)
    assert candidates == [] and "more than 50 MB" in problems[0]
    assert not store.root.exists()
