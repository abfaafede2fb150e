"""Lists the files of the workspace for `@` mentions, leaving out what `.gitignore` leaves out, and ranks them.

The listing walks the folder with `pathspec`'s gitignore rules: the workspace's `.gitignore`, every nested
`.gitignore` (its patterns count from its own folder), and `.git/info/exclude`. A folder that is ignored is not
entered, so a `node_modules/` or `.venv/` costs nothing. `.git` and Anton's own `.anton` folder are never listed.
The walk stops after `MAX_FILES` files (`FileListing.capped` says so). We walk ourselves rather than asking
`git ls-files` because many Anton workspaces are plain folders, not repositories, and one path that works for both
is simpler to keep right; the price is that a user's global git excludes are not read.

`WorkspaceFiles` keeps the last listing: younger than `FRESH_FOR` seconds it is given as it is; older, it is given
while a thread walks the tree again; a folder whose top-level entries changed is walked again at once.
Ranking uses rapidfuzz (imported when first needed).
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 20_000
"""At most this many files are listed; a bigger tree is cut (newest-first order is not promised)."""
MAX_SCANNED = 200_000
"""At most this many folder entries are looked at (ignored ones included), however few files they hold."""
FRESH_FOR = 10.0  # seconds a listing is given again without walking the folder
NEVER_LISTED = frozenset({".git", ".anton"})


@dataclass(frozen=True)
class FileListing:
    """The workspace's files as paths relative to it, with `/` separators, sorted."""

    files: tuple[str, ...]
    capped: bool = False
    taken_at: float = field(default=0.0, compare=False)


def _spec(lines: list[str]):
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def list_files(root: Path, *, limit: int = MAX_FILES, scan_limit: int = MAX_SCANNED) -> FileListing:
    """Walk `root` breadth by folder (sorted names), skipping what the gitignore rules ignore; at most `limit`
    files, and `scan_limit` entries looked at."""
    root = Path(root)
    rules: list[tuple[str, object]] = []  # (folder relative to root, "" for the root; its spec)
    top = _read_lines(root / ".git" / "info" / "exclude") + _read_lines(root / ".gitignore")
    if top:
        rules.append(("", _spec(top)))
    files: list[str] = []
    capped = False
    scanned = 0

    def ignored(relative: str, is_dir: bool) -> bool:
        for base, spec in rules:
            if base and not relative.startswith(base + "/"):
                continue
            inner = relative[len(base) + 1 :] if base else relative
            if spec.match_file(inner + "/" if is_dir else inner):  # type: ignore[attr-defined]
                return True
        return False

    pending = [""]
    while pending and not capped:
        folder = pending.pop(0)
        here = root / folder if folder else root
        if folder:
            nested = _read_lines(here / ".gitignore")
            if nested:
                rules.append((folder, _spec(nested)))
        try:
            with os.scandir(here) as entries:
                found = sorted(entries, key=lambda entry: entry.name)
        except OSError:
            continue
        scanned += len(found)
        if scanned > scan_limit:
            found = found[: max(0, len(found) - (scanned - scan_limit))]
            capped = True
        for entry in found:
            relative = f"{folder}/{entry.name}" if folder else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                continue
            if is_dir:
                if entry.name not in NEVER_LISTED and not ignored(relative, True):
                    pending.append(relative)
            elif is_file and not ignored(relative, False):
                if len(files) >= limit:
                    capped = True
                    break
                files.append(relative)
    return FileListing(tuple(sorted(files)), capped, time.monotonic())


def rank(query: str, files: tuple[str, ...] | list[str], limit: int = 50) -> list[str]:
    """The files that best match `query` (case-insensitive), best first; with no query, the files nearest the top
    folder first.

    Files whose path holds the query's letters in order come first, in tiers: the exact text in the file's name,
    the exact text anywhere in the path, the letters in order in the name, then in the path; within a tier by
    rapidfuzz's partial ratio of the query to the name, then the shorter path. When no path holds the letters in
    order (a typo), the closest spellings by rapidfuzz are given instead."""
    if not query:
        return sorted(files, key=lambda path: (path.count("/"), path))[:limit]
    from rapidfuzz import fuzz, process

    query = query.lower()
    in_order = re.compile("".join(f"[^{re.escape(char)}]*{re.escape(char)}" for char in query))
    ranked: list[tuple[int, float, int, str]] = []
    for path in files:
        lowered = path.lower()
        if not in_order.match(lowered):
            continue
        name = lowered.rsplit("/", 1)[-1]
        tier = 3 if query in name else 2 if query in lowered else 1 if in_order.match(name) else 0
        ranked.append((-tier, -fuzz.partial_ratio(query, name), len(path), path))
    if ranked:
        return [path for *_, path in sorted(ranked)[:limit]]
    found = process.extract(query, [path.lower() for path in files], scorer=fuzz.partial_ratio, processor=None,
                            limit=limit, score_cutoff=60)  # fmt: skip
    return [files[index] for _text, _score, index in found]


class WorkspaceFiles:
    """The cached listing of one workspace; safe to call from worker threads.

    A fresh listing is given as it is. One older than `fresh_for` is still given at once, while a thread walks the
    folder again for the next call (a keystroke never waits for a big tree twice). With no listing yet, or when the
    top folder's entries changed (a file added or removed there), the folder is walked before answering.
    """

    def __init__(self, root: Path, *, limit: int | None = None, fresh_for: float = FRESH_FOR) -> None:
        self.root = Path(root)
        self.limit = MAX_FILES if limit is None else limit
        self.fresh_for = fresh_for
        self._listing: FileListing | None = None
        self._stamp: int | None = None
        self._lock = threading.Lock()
        self._refresher: threading.Thread | None = None

    def _top_stamp(self) -> int | None:
        try:
            return self.root.stat().st_mtime_ns
        except OSError:
            return None

    def _walk(self) -> FileListing:
        stamp = self._top_stamp()
        listing = list_files(self.root, limit=self.limit)
        with self._lock:
            if self._listing is None or listing.taken_at >= self._listing.taken_at:
                self._listing, self._stamp = listing, stamp
            return self._listing

    def listing(self, *, refresh: bool = False) -> FileListing:
        with self._lock:
            current, stamp = self._listing, self._stamp
        if refresh or current is None or self._top_stamp() != stamp:
            return self._walk()
        if time.monotonic() - current.taken_at >= self.fresh_for:
            self._refresh_in_background()
        return current

    def _refresh_in_background(self) -> None:
        with self._lock:
            if self._refresher is not None and self._refresher.is_alive():
                return
            self._refresher = threading.Thread(target=self._walk, name="workspace-files", daemon=True)
            self._refresher.start()

    def settle(self, timeout: float | None = None) -> None:
        """Wait for a background walk, if one runs (for tests and benchmarks)."""
        refresher = self._refresher
        if refresher is not None:
            refresher.join(timeout)

    @property
    def capped(self) -> bool:
        """Whether the last listing stopped at a cap (some files of the workspace are not in it)."""
        return self._listing is not None and self._listing.capped

    def match(self, query: str, limit: int = 50) -> list[str]:
        return rank(query, self.listing().files, limit)
