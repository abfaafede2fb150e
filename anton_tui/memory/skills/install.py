"""Installing skills from a folder or a git repository into the user's skills folder.

A source is a local path or a git URL; a URL is cloned with `git clone --depth 1` into a temporary folder that is
removed afterwards. The source may be one skill (a folder holding SKILL.md) or hold several (every folder under it
with a SKILL.md, found a few levels deep); the caller chooses which to install from `survey`'s offers, which carry
each skill's problem (it cannot be installed) or clash (its label is taken). Each skill is checked before anything
is copied: its SKILL.md must parse, no link may lead out of it or back into itself, it may hold only files and
folders (no named pipe, socket or device), and at most `MAX_SKILL_BYTES` (50 MB, counted by the files' sizes, so
a sparse file counts whole). An existing skill is replaced only when asked, and then its folder is first moved into
the backups folder beside the skills folder, so nothing is lost. Every refusal names its reason.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from anton_tui.memory.skills.format import (
    SkillFormatError,
    front_matter_fields,
    link_out,
    normalize_name,
    parse_front_matter,
    read_text,
    split_skill_md,
)
from anton_tui.memory.skills.store import SkillStore

MAX_DEPTH = 3
CLONE_TIMEOUT = 120
MAX_SKILL_BYTES = 50 * 1024 * 1024
SKIPPED = (".git", "__pycache__")  # never copied


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
                check=False, capture_output=True, text=True, timeout=CLONE_TIMEOUT,
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


def _contents_problem(folder: Path) -> str | None:
    """Why the files of `folder` cannot be copied as a skill (what a copy would meet: links are followed), or None."""
    total = 0
    seen: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        here = os.stat(dirpath)
        if (here.st_dev, here.st_ino) in seen:
            return f"{os.path.relpath(dirpath, folder)} leads to a folder the skill already holds (a link loop)"
        seen.add((here.st_dev, here.st_ino))
        dirnames[:] = [name for name in dirnames if name not in SKIPPED]
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, folder)
            try:
                info = os.stat(path)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    return f"{rel} is a symbolic link that leads back to itself (a loop)"
                if exc.errno == errno.ENOENT:
                    return f"{rel} is a symbolic link to nothing"
                return f"{rel} cannot be read: {exc.strerror or exc}"
            if stat.S_ISDIR(info.st_mode):
                continue
            if not stat.S_ISREG(info.st_mode):
                kind = "a named pipe" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(
                    info.st_mode) else "a device"  # fmt: skip
                return f"{rel} is {kind}, not a file; a skill holds only files and folders"
            total += info.st_size
            if total > MAX_SKILL_BYTES:
                return (f"it holds more than {MAX_SKILL_BYTES // (1024 * 1024)} MB of files (at {rel}), more than a "
                        "skill may hold")  # fmt: skip
    return None


def _check(folder: Path, root: Path) -> Candidate:
    escape = link_out(folder, root)
    if escape is not None:
        raise InstallError(f"{folder.name}: {escape}")
    problem = _contents_problem(folder)
    if problem is not None:
        raise InstallError(f"{folder.name}: {problem}")
    try:
        front_text, _ = split_skill_md(read_text(folder / "SKILL.md"))
        fields = front_matter_fields(parse_front_matter(front_text), folder.name)
    except (SkillFormatError, OSError) as exc:
        raise InstallError(f"{folder.name}: {exc}") from None
    label = normalize_name(fields.name) or normalize_name(folder.name)
    if not label:
        raise InstallError(f"{folder.name}: its name has no letters or digits")
    return Candidate(folder, label, fields.description)


def _skill_folders(root: Path) -> list[Path]:
    """`root` itself when it holds a SKILL.md, else every folder with a SKILL.md up to MAX_DEPTH down."""
    if (root / "SKILL.md").is_file():
        return [root]
    folders = []
    for dirpath, dirnames, filenames in os.walk(root):
        depth = len(Path(dirpath).relative_to(root).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if depth < MAX_DEPTH else []
        if "SKILL.md" in filenames and Path(dirpath) != root:
            dirnames[:] = []
            folders.append(Path(dirpath))
    return folders


def find_skills(root: Path) -> tuple[list[Candidate], list[str]]:
    """The skills under `root` (itself, or folders with SKILL.md up to MAX_DEPTH down) and the problems found."""
    found: list[Candidate] = []
    problems: list[str] = []
    for folder in _skill_folders(root):
        try:
            found.append(_check(folder, root))
        except InstallError as exc:
            problems.append(str(exc))
    return found, problems


@dataclass(frozen=True)
class Offer:
    """One skill found in a source, as the user chooses among them. `candidate` is None when it cannot be installed
    (`problem` says why); `clash` says which skill already uses its label (installing it then replaces the user's
    own, after moving it into a backup, or hides another source's)."""

    label: str
    description: str
    candidate: Candidate | None
    problem: str | None = None
    clash: str | None = None
    replaces: bool = False
    """True when installing it replaces one of the user's own skills."""

    @property
    def installable(self) -> bool:
        return self.candidate is not None


def survey(store: SkillStore, root: Path) -> list[Offer]:
    """Every skill found under `root`, checked, with its clash against the skills `store` already has."""
    from anton_tui.memory.skills.sources import SOURCE_TITLES

    offers: list[Offer] = []
    seen: set[str] = set()
    for folder in _skill_folders(root):
        try:
            candidate = _check(folder, root)
        except InstallError as exc:
            offers.append(Offer(folder.name, "", None, str(exc).removeprefix(f"{folder.name}: ")))
            continue
        label = candidate.label
        if label in seen:
            offers.append(Offer(label, candidate.description, None, f"another skill in {folder.parent.name or 'it'} "
                                f"is also called {label}"))  # fmt: skip
            continue
        seen.add(label)
        clash, replaces = None, False
        if store.exists(label):
            clash, replaces = f"you already have a skill called {label}", True
        else:
            other = store.read_only_folder(label)
            if other is not None and other[0].before_user:
                offers.append(Offer(label, candidate.description, None,
                                    f"{SOURCE_TITLES.get(other[0].key)} has a skill called {label}, which wins"))  # fmt: skip
                continue
            if other is not None:
                clash = f"it will hide the one in {SOURCE_TITLES.get(other[0].key, other[0].key)}"
        offers.append(Offer(label, candidate.description, candidate, None, clash, replaces))
    return offers


def install(store: SkillStore, candidate: Candidate, *, replace: bool = False) -> Path:
    """Copy one checked skill into the user's skills folder under its label. When that label is taken, raises
    InstallError (nothing is overwritten) unless `replace`: then the existing folder is first moved into
    `backups/skills/<label>.<time>` beside the skills folder."""
    target = store.root / candidate.label
    existing = [store.root / v for v in dict.fromkeys((candidate.label, candidate.label.replace("-", "_")))]
    existing = [path for path in existing if os.path.lexists(path)]
    if existing and not replace:
        raise InstallError(f"A skill called {candidate.label} already exists; nothing was installed.")
    store.root.mkdir(parents=True, exist_ok=True)
    staging = store.root.parent / f".install-{candidate.label}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    problem = _contents_problem(candidate.folder)  # again: the folder may have changed since it was offered
    if problem is not None:
        raise InstallError(f"Could not copy {candidate.label}: {problem}; nothing was installed.")
    try:
        shutil.copytree(candidate.folder, staging, ignore=shutil.ignore_patterns(*SKIPPED))
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise InstallError(f"Could not copy {candidate.label}: {_copy_error(exc)}; nothing was installed.") from None
    moved: list[tuple[Path, Path]] = []
    try:
        if existing:
            from anton_tui.memory.skills.convert import backups_folder

            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
            for path in existing:
                backup = backups_folder(store) / f"{path.name}.{stamp}"
                backup.parent.mkdir(parents=True, exist_ok=True)
                os.rename(path, backup)
                moved.append((path, backup))
        os.rename(staging, target)
    except OSError as exc:
        for path, backup in reversed(moved):  # put the user's own skill back where it was
            os.rename(backup, path)
        shutil.rmtree(staging, ignore_errors=True)
        raise InstallError(f"Could not install {candidate.label}: {_copy_error(exc)}; nothing was changed.") from None
    return target


def _copy_error(exc: OSError) -> str:
    """The reason a copy failed, in words (`shutil.Error` carries a list of failures and no `strerror`)."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        source, _target, why = exc.args[0][0]
        return f"{Path(source).name}: {why}"
    if exc.strerror:
        return f"{Path(os.fsdecode(exc.filename)).name}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__
