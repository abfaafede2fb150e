"""Installing skills from a folder or a git repository into the user's skills folder.

A source is a local path or a git URL; a URL is cloned with `git clone --depth 1` into a temporary folder that is
removed afterwards. The source may be one skill (a folder holding SKILL.md) or hold several (every folder under it
with a SKILL.md, found a few levels deep); the caller chooses which to install. Each skill is checked (its SKILL.md
must parse, no link may lead out of it) before anything is copied, and an existing skill is never overwritten.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from anton_tui.memory.skill_format import (
    SkillFormatError,
    front_matter_fields,
    link_out,
    normalize_name,
    parse_front_matter,
    read_text,
    split_skill_md,
)
from anton_tui.memory.skills import SkillStore

MAX_DEPTH = 3
CLONE_TIMEOUT = 120


class InstallError(ValueError):
    """Nothing was installed; the message says why."""


@dataclass(frozen=True)
class Candidate:
    """One skill found in a source: its folder, the label it would get, and what it says it does."""

    folder: Path
    label: str
    description: str


def is_git_url(source: str) -> bool:
    return source.startswith(("http://", "https://", "git@", "ssh://", "git://", "file://")) or source.endswith(".git")


@contextmanager
def fetched(source: str) -> Iterator[Path]:
    """The source as a local folder: the path itself, or a shallow clone of a git URL (removed on exit)."""
    if not is_git_url(source):
        path = Path(source).expanduser()
        if not path.is_dir():
            raise InstallError(f"{source} is not a folder (nor a git URL); nothing was installed.")
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="anton-skill-install-") as scratch:
        target = Path(scratch) / "repo"
        try:
            done = subprocess.run(
                ["git", "clone", "--depth", "1", "--quiet", source, str(target)],
                capture_output=True, text=True, timeout=CLONE_TIMEOUT,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )  # fmt: skip
        except FileNotFoundError:
            raise InstallError("git is not installed, so a URL cannot be cloned; nothing was installed.") from None
        except subprocess.TimeoutExpired:
            raise InstallError(f"Cloning {source} took longer than {CLONE_TIMEOUT} s; nothing was installed.") from None
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["git clone failed"])[-1]
            raise InstallError(f"Could not clone {source}: {reason}. Nothing was installed.")
        yield target


def _check(folder: Path, root: Path) -> Candidate:
    escape = link_out(folder, root)
    if escape is not None:
        raise InstallError(f"{folder.name}: {escape}")
    try:
        front_text, _ = split_skill_md(read_text(folder / "SKILL.md"))
        fields = front_matter_fields(parse_front_matter(front_text), folder.name)
    except (SkillFormatError, OSError) as exc:
        raise InstallError(f"{folder.name}: {exc}") from None
    label = normalize_name(fields.name) or normalize_name(folder.name)
    if not label:
        raise InstallError(f"{folder.name}: its name has no letters or digits")
    return Candidate(folder, label, fields.description)


def find_skills(root: Path) -> tuple[list[Candidate], list[str]]:
    """The skills under `root` (itself, or folders with SKILL.md up to MAX_DEPTH down) and the problems found."""
    if (root / "SKILL.md").is_file():
        try:
            return [_check(root, root)], []
        except InstallError as exc:
            return [], [str(exc)]
    found: list[Candidate] = []
    problems: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        depth = len(Path(dirpath).relative_to(root).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if depth < MAX_DEPTH else []
        if "SKILL.md" in filenames and Path(dirpath) != root:
            dirnames[:] = []
            try:
                found.append(_check(Path(dirpath), root))
            except InstallError as exc:
                problems.append(str(exc))
    return found, problems


def install(store: SkillStore, candidate: Candidate) -> Path:
    """Copy one checked skill into the user's skills folder under its label. Raises InstallError if that label is
    taken (nothing is overwritten)."""
    target = store.root / candidate.label
    if store.exists(candidate.label):
        raise InstallError(f"A skill called {candidate.label} already exists; nothing was installed.")
    store.root.mkdir(parents=True, exist_ok=True)
    staging = store.root.parent / f".install-{candidate.label}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(candidate.folder, staging, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        os.rename(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise InstallError(f"Could not copy {candidate.label}: {exc.strerror}; nothing was installed.") from None
    return target
