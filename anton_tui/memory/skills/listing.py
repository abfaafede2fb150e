"""Listing skills cheaply: the label, name and description of every skill in every source, as the prompt needs them
each turn, without reading any procedure; plus the full listings the skills screen and the Skills tab show.

The first listing reads one small file per skill (the SKILL.md front matter, or an older skill's meta.json) and
checks its stats.json; that costs time in proportion to the number of skills. A SKILL.md skill whose folder the
skills folder's listing shows is not a link is read the short way (`_plain_skill_entry`): its SKILL.md opened without
following a link, then its folder listed for links and a stats.json, with no `lstat` of the folder; anything out of
the ordinary there is read again with every check. With a snapshot path (the app's), a folder's first reading is
taken instead from the snapshot the last run left, when every file its entry depends on is as it was then
(`snapshot.py`). Later listings reuse what was read:
a skills folder's list of sub-folders is kept while the folder keeps its signature (inode, size, modification and
change time, which change when a skill folder is added, removed or renamed), and each healthy SKILL.md skill's fields
while its SKILL.md keeps its signature; older-layout, broken and non-skill folders are also checked by their
folder's and stats.json's signatures.

How a warm listing knows nothing changed:
- Without a change feed, by checking those signatures: one `stat` per skill.
- Once `follow_roots` has started the change feed (`feed.py`, Linux inotify; the app starts it in its
  warm-up), by asking the feed which skill folders changed since the last listing. A folder is vouched for when it
  was watched before its cached entry was read or last checked, nothing happened in it since, and none of the files
  its entry depends on is a symlink or has a second hard link (an edit through another name raises no event in this
  folder). The listing stats each skills folder (as before), reads the feed without waiting, and checks again only
  the folders the feed marked changed and those it cannot vouch for (not watched: over the watch budget, a symlinked
  folder, a network file system); so a warm listing costs the same with 10 or 10,000 skills. The kernel queues an
  event inside the call that makes the change, so every change that finished before a listing began is seen by it,
  as with the `stat` checks.

Known limits. A stats.json of a healthy SKILL.md skill that is later damaged in place (its SKILL.md untouched) is
noticed when the skill is loaded or recalled, which report it as broken, not by the listing. With the feed on, a
second hard link made to a skill's file after it was vouched for, and an edit through that other name, raise no
event in the skill's folder: the edit shows once anything else in that folder changes.
"""

from __future__ import annotations

import logging
import os
import stat as stat_kind
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from anton_tui import gc_policy
from anton_tui.memory.skills import snapshot
from anton_tui.memory.skills.format import (
    SkillFormatError,
    SummaryFields,
    check_stats,
    describe_error,
    link_out,
    listed_fields,
    read_front_matter_and_stat,
    read_text_and_stat,
    stats_written_shape,
    summary_fields_of_meta,
    summary_fields_of_skill_md,
)
from anton_tui.memory.skills.model import (
    SOURCE_ORDER_INDEX,
    BrokenSkill,
    Skill,
    SkillClash,
    SkillSummary,
    all_plain_labels,
    is_valid_label,
    match_key,
)
from anton_tui.memory.skills.reader import diagnose, read_source_skill
from anton_tui.memory.skills.sources import SkillSource, in_precedence_order

if TYPE_CHECKING:
    from anton_tui.memory.skills.feed import SkillChangeFeed

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- cached listing fields


Signature = int
"""The hash of (inode, size, modification time, change time): one number per watched path, not a tuple of four (a
listing of 10,000 skills keeps some 20,000 of them)."""


def _signature(path: str) -> Signature | None:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return hash((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


Watched = (
    tuple[tuple[str, Signature | None], ...] | Signature | tuple[Signature | None, Signature | None, Signature | None]
)
"""The paths whose signatures must be unchanged for an entry to hold, each with its signature when read. The paths of
the two common kinds are the folder's and go without saying, so that a cache of 10,000 skills keeps 20,000 paths and
some 30,000 tuples less (2-3 MB): a healthy SKILL.md skill keeps just its SKILL.md's signature, a healthy older skill
those of its folder, stats.json and meta.json, in that order."""
_CachedSummary = tuple[Watched, SummaryFields | None, str | None]
"""(watched, fields, problem) of one skill folder (see `SummaryFields` for why a plain tuple)."""


T = TypeVar("T")

_summary_cache: dict[str, _CachedSummary] = {}
_folder_cache: dict[str, _Folders] = {}


def _watched_paths(folder: str, watched: Watched) -> tuple[tuple[str, Signature | None], ...]:
    if isinstance(watched, int):
        return ((folder + _SKILL_MD_IN, watched),)
    if watched and not isinstance(watched[0], tuple):  # an older skill's three signatures
        folder_sig, stats_sig, meta_sig = watched
        return (folder, folder_sig), (folder + _STATS_JSON_IN, stats_sig), (folder + _META_JSON_IN, meta_sig)
    return watched


def _still_valid(folder: str, cached: _CachedSummary) -> bool:
    return all(_signature(path) == sig for path, sig in _watched_paths(folder, cached[0]))


def read_summary(folder: str) -> tuple[SummaryFields | None, str | None]:
    """(listing fields, None) for a healthy skill, (None, reason) for a broken one, (None, None) for a non-skill folder.

    Reads meta.json or the SKILL.md front matter and checks stats.json, never the procedure. Results are cached per
    folder (see the module's docstring for what is checked before one is reused).
    """
    with _lock:
        if _feed is not None:
            _note_changes(_feed.drain())
        entry = _summary_entry(folder)
    return entry[1], entry[2]


def _summary_entry(folder: str, is_link: bool | None = None) -> _CachedSummary:
    """The cached entry for `folder` while it holds, else a fresh one (also cached). With the change feed on, the
    folder is watched before it is checked or read, and a folder the feed vouches for is not checked at all.
    `is_link` as for `_checked_entry`."""
    feed = _feed
    if feed is None or not feed.following(os.path.dirname(folder)):
        return _checked_entry(folder, is_link)[0]
    watched = feed.watch(folder)
    if feed.marked:  # the new watch took the place of one whose folder was renamed unseen
        _note_changes(feed.take_marked())
    if folder in _trusted:
        return _summary_cache[folder]
    entry, kept = _checked_entry(folder, is_link)
    if watched and kept and _plain_files(folder, entry):
        _trusted.add(folder)
        _suspects.get(os.path.dirname(folder), set()).discard(folder)
    else:
        _suspects.setdefault(os.path.dirname(folder), set()).add(folder)
    return entry


def _checked_entry(folder: str, is_link: bool | None = None) -> tuple[_CachedSummary, bool]:
    """The cached entry for `folder` if its watched paths keep their signatures, else the folder read afresh; and
    whether the entry is kept in the cache (an unreadable folder's is not). `is_link`: whether the folder is a
    symbolic link, as its skills folder's listing just said (None: not known; a link is always read afresh)."""
    cached = _summary_cache.get(folder)
    if cached is not None and not is_link and _still_valid(folder, cached):
        return cached, True
    return _read_entry(folder, is_link)


def _read_entry(folder: str, is_link: bool | None) -> tuple[_CachedSummary, bool]:
    """`folder` read afresh (`_checked_entry` without the cache), or taken from the last run's snapshot when every
    signature of its entry there holds (the same answer)."""
    root, _, label = folder.rpartition(os.sep)
    _generation[root] = _generation.get(root, 0) + 1
    first = folder not in _summary_cache
    _from_snapshot_folders.discard(folder)
    if is_link is False:
        entry = (_from_snapshot(folder) if first else None) or _plain_skill_entry(folder, label)
        if entry is not None:
            _summary_cache[folder] = entry
            return entry, True
    try:  # taken before reading, so a change made while reading is noticed next time
        folder_st = os.lstat(folder)
        is_link = stat_kind.S_ISLNK(folder_st.st_mode)
        folder_sig: Signature | None = _signature(folder) if is_link else _signature_of(folder_st)
    except (FileNotFoundError, NotADirectoryError):
        is_link, folder_sig = False, None
    names: set[str] = set()
    linked = is_link
    inner: list[str] = []  # sub-folders, looked through for links when the folder itself holds none
    try:
        with os.scandir(folder) as found:
            for item in found:
                names.add(item.name)
                if item.is_symlink():
                    linked = True
                elif item.is_dir(follow_symlinks=False):
                    inner.append(item.path)
    except OSError as exc:
        return (((folder, None),), None, describe_error(exc)), False  # not kept: tried again next time
    if linked or (inner and _has_links(inner)):
        escape = link_out(folder, root)
        if escape is not None:
            entry = _summary_cache[folder] = ((folder, folder_sig),), None, escape
            return entry, True
    primary = "SKILL.md" if "SKILL.md" in names else "meta.json" if "meta.json" in names else None
    stats_path = f"{folder}{os.sep}stats.json"
    primary_path = f"{folder}{os.sep}{primary or ''}"
    primary_sig: Signature | None = None
    stats_sig: Signature | None = None
    fields: SummaryFields | None = None
    problem: str | None = None
    try:
        if primary == "SKILL.md":
            text, primary_st = read_front_matter_and_stat(primary_path)
            primary_sig = _signature_of(primary_st)
            fields = summary_fields_of_skill_md(text, label)
        elif primary == "meta.json":
            text, primary_st = read_text_and_stat(primary_path)
            primary_sig = _signature_of(primary_st)
            fields = summary_fields_of_meta(text, label)
            if "declarative.md" not in names:
                raise SkillFormatError("declarative.md (the procedure) is missing")
        elif "declarative.md" in names:
            raise SkillFormatError("meta.json is missing")
        if fields is not None and "stats.json" in names:
            text, stats_st = read_text_and_stat(stats_path)
            stats_sig = _signature_of(stats_st)
            check_stats(text)
    except (SkillFormatError, OSError) as exc:
        fields, problem = None, describe_error(exc)
    if fields is not None and fields[3] == "skill_md":  # a healthy SKILL.md skill: its one file read is enough
        assert primary_sig is not None  # (read above)
        entry = _summary_cache[folder] = primary_sig, fields, None
        return entry, True
    if primary is not None and primary_sig is None:
        primary_sig = _signature(primary_path)  # (not opened: its state as it is)
    if "stats.json" in names and stats_sig is None:
        stats_sig = _signature(stats_path)
    if fields is not None:  # a healthy older skill: its paths go without saying (see `Watched`)
        entry = _summary_cache[folder] = (folder_sig, stats_sig, primary_sig), fields, None
        return entry, True
    watched = [(folder, folder_sig), (stats_path, stats_sig)]
    if primary is not None:
        watched.append((primary_path, primary_sig))
    entry = _summary_cache[folder] = tuple(watched), fields, problem
    return entry, True


_OPEN_NOT_FOLLOWING = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_FIRST_READ = 8192  # as much as `read_front_matter_and_stat` reads and decodes at once
_SKILL_MD_IN = f"{os.sep}SKILL.md"
_STATS_JSON_IN = f"{os.sep}stats.json"
_META_JSON_IN = f"{os.sep}meta.json"


def _plain_skill_entry(folder: str, label: str) -> _CachedSummary | None:
    """The entry of a healthy SKILL.md skill whose folder is known not to be a link, read the short way: its SKILL.md
    (not through a link) and the folder's listing, no `lstat` of the folder (a healthy SKILL.md skill's entry does
    not watch it). None when anything is out of the ordinary (no SKILL.md, links, front matter that is not of the
    plain kind, an error): then `_checked_entry` reads the folder from the start, as it reads every other folder."""
    path = folder + _SKILL_MD_IN
    try:
        fd = os.open(path, _OPEN_NOT_FOLLOWING)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        chunk = os.read(fd, _FIRST_READ)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        text = chunk.decode()
    except UnicodeDecodeError:
        return None
    closing = text.find("\n---", 3)
    if closing < 0 or text[closing + 4 : closing + 5] != "\n" or not text.startswith("---\n"):
        return None
    stats = False
    inner: list[str] = []
    try:
        with os.scandir(folder) as found:
            for item in found:
                if item.is_symlink():
                    return None
                if item.name == "stats.json":
                    stats = True
                elif item.is_dir():  # (not a link, so its own kind)
                    inner.append(item.path)
    except OSError:
        return None
    if inner and _has_links(inner):
        return None
    try:
        display_name, description, invocable, by_user = listed_fields(text, label, 4, closing + 1)
        if stats and not stats_written_shape(_first_bytes(folder + _STATS_JSON_IN)):
            check_stats(read_text_and_stat(folder + _STATS_JSON_IN)[0])
    except (SkillFormatError, OSError):
        return None
    sig = hash((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return sig, (display_name, description, "", "skill_md", invocable, by_user), None


def _first_bytes(path: str) -> bytes:
    """The first `_FIRST_READ` bytes of the file at `path` (not through a link)."""
    fd = os.open(path, _OPEN_NOT_FOLLOWING)
    try:
        return os.read(fd, _FIRST_READ)
    finally:
        os.close(fd)


def _signature_of(st: os.stat_result) -> Signature:
    return hash((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def _has_links(folders: list[str]) -> bool:
    """Whether any of these folders holds a symbolic link anywhere (then `link_out` looks at where they lead)."""
    pending = list(folders)
    while pending:
        try:
            with os.scandir(pending.pop()) as found:
                for entry in found:
                    if entry.is_symlink():
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
        except OSError:
            continue  # (as `os.walk` passes over a folder it cannot list)
    return False


def _plain_files(folder: str, entry: _CachedSummary) -> bool:
    """Whether no file `folder`'s `entry` depends on is a symlink or has a second hard link: an edit to a link's
    target, or through another name, raises no event in the skill's folder, so such an entry is checked by `stat`
    each time."""
    for path, _ in _watched_paths(folder, entry[0]):
        try:
            st = os.lstat(path)
        except OSError:
            continue  # absent: creating it raises an event in the folder
        if stat_kind.S_ISLNK(st.st_mode) or (not stat_kind.S_ISDIR(st.st_mode) and st.st_nlink > 1):
            return False
    return True


def skill_folders(root: str) -> list[tuple[str, str]]:
    """(name, path) of every visible sub-folder of `root`, sorted by name, kept while `root`'s signature holds.
    Raises OSError as `os.scandir` does (FileNotFoundError when `root` does not exist)."""
    return _scan(root)[0]


class _Folders(NamedTuple):
    signature: Signature
    entries: list[tuple[str, str]]
    """(name, path) of each visible sub-folder, sorted by name."""
    links: frozenset[str]
    """The paths of those that are symbolic links (to folders)."""
    plain_labels: bool
    """Whether every name is a label of the usual kind (then none needs checking on its own)."""


def _scan(root: str) -> tuple[list[tuple[str, str]], os.stat_result]:
    """`skill_folders(root)` and the `stat` of `root` it was checked by."""
    st = os.stat(root)
    return _scanned(root, st).entries, st


def _scanned(root: str, st: os.stat_result) -> _Folders:
    """The sub-folders of `root`, listed again unless `st` (its `stat`) shows it unchanged since the last time."""
    sig = hash((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    cached = _folder_cache.get(root)
    if cached is not None and cached.signature == sig:
        return cached
    entries: list[tuple[str, str]] = []
    links: list[str] = []
    with os.scandir(root) as found:
        for item in found:
            if item.is_dir(follow_symlinks=False):
                name = item.name
                if name[0] != ".":
                    entries.append((name, item.path))
            elif item.is_symlink() and item.is_dir() and item.name[0] != ".":  # a link to a folder
                entries.append((item.name, item.path))
                links.append(item.path)
    entries.sort()
    plain = all_plain_labels([name for name, _ in entries])
    folders = _folder_cache[root] = _Folders(sig, entries, frozenset(links), plain)
    return folders


_root_cache: dict[tuple[str, str], tuple[list[tuple[str, str]], list[_CachedSummary], Any, int]] = {}


def _all_hold(folders: list[tuple[str, str]], entries: list[_CachedSummary]) -> bool:
    """Whether every watched path of every entry keeps its signature (the warm path: one `stat` per skill, inlined);
    `folders`: the (name, path) of the folder of each entry."""
    stat = os.stat
    for (_, folder), entry in zip(folders, entries, strict=True):
        watched = entry[0]
        if isinstance(watched, int):
            try:
                st = stat(folder + _SKILL_MD_IN)
            except (FileNotFoundError, NotADirectoryError):
                return False
            if hash((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)) != watched:
                return False
            continue
        for path, sig in _watched_paths(folder, watched):
            try:
                st = stat(path)
            except (FileNotFoundError, NotADirectoryError):
                if sig is not None:
                    return False
                continue
            if sig is None or hash((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)) != sig:
                return False
    return True


def _root_view(root: str, key: str, build: Callable[[_Folders, list[_CachedSummary]], T]) -> T:
    """`build(folders, cached entries)` for the skill folders of `root`, reused as long as the folder list and every
    folder's cached entry are the same as last time (so a warm call builds nothing). Raises OSError as
    `skill_folders` does."""
    return _view(root, key, build, hand_out=False)[0]


def _view(
    root: str, key: str, build: Callable[[_Folders, list[_CachedSummary]], T], *, hand_out: bool
) -> tuple[T, bool]:
    """`_root_view(root, key, build)`, and whether the value is the caller's own. With `hand_out`, a value built by
    this call is given to the caller and not kept: the next call builds the kept one from the cached entries (so a
    first listing does not copy what it built)."""
    with _lock, gc_policy.paused():  # (what a listing builds is tuples, strings and dicts of them: no cycles)
        st = os.stat(root)
        folders = _scanned(root, st)
        entries = folders.entries
        cached = _root_cache.get((root, key))
        feed = _feed
        followed = feed is not None and feed.following(root)
        if feed is None or not followed:
            fresh = cached is None or cached[0] is not entries or not _all_hold(entries, cached[1])
        else:
            _note_changes(feed.changes(root, st))
            _check_suspects(root, folders)
            fresh = cached is None or cached[0] is not entries or cached[3] != _generation.get(root, 0)
        if not fresh:
            assert cached is not None
            if cached[2] is not _NOT_KEPT:
                return cached[2], False
            value = build(folders, cached[1])
            _root_cache[(root, key)] = (cached[0], cached[1], value, cached[3])
            return value, False
        links = folders.links
        if followed:
            found = [_summary_entry(path, path in links) for _, path in entries]
        else:
            found = _cold_entries(root, folders)
        cursor = _snapshot.pop(root, None)  # every folder has taken its entry
        if cursor is not None:
            cursor.close()
        value = build(folders, found)
        _root_cache[(root, key)] = (entries, found, _NOT_KEPT if hand_out else value, _generation.get(root, 0))
        return value, hand_out


_NOT_KEPT: Any = object()
"""In `_root_cache`: the value was handed out when built, and is built again from the cached entries when asked."""


def _cold_entries(root: str, folders: _Folders) -> list[_CachedSummary]:
    """The entry of every folder of `root` (no change feed): the cached one while it holds, else read afresh; a
    folder never read before (a first listing) goes straight to `_plain_skill_entry`."""
    cache = _summary_cache
    links = folders.links
    found: list[_CachedSummary] = []
    _generation[root] = _generation.get(root, 0) + 1
    for label, path in folders.entries:
        entry = None
        if path not in cache:
            if path not in links:
                entry = _from_snapshot(path) or _plain_skill_entry(path, label)
            if entry is not None:
                cache[path] = entry
            else:  # out of the ordinary: read with every check
                entry = _read_entry(path, None)[0]
        else:
            entry = _checked_entry(path, path in links)[0]
        found.append(entry)
    return found


# --------------------------------------------------------------------------- the last run's snapshot (snapshot.py)

_snapshot: dict[str, snapshot.Cursor] = {}
"""Per skills folder not listed yet in this process: a cursor over its entries in the snapshot, which its first
listing takes from (each used when every signature in it holds) and then drops."""
_snapshots_loaded: set[tuple[str, str]] = set()
_from_snapshot_folders: set[str] = set()
"""The folders whose cached entry was taken from the snapshot and has not been read afresh since (their entry there
is current without checking it again)."""


def load_snapshot(path: Path, roots: Iterable[str]) -> None:
    """Take in the snapshot at `path` for `roots` (once per process, path and root); only folders not read yet take
    their entries from it."""
    with _lock:
        fresh = [root for root in roots if (str(path), root) not in _snapshots_loaded]
        if not fresh:
            return
        _snapshots_loaded.update((str(path), root) for root in fresh)
        for root, cursor in snapshot.load(path, fresh).items():
            _snapshot.setdefault(root, cursor)


def _from_snapshot(folder: str) -> _CachedSummary | None:
    """The cached entry of `folder` as the snapshot has it, when every signature there holds; else None."""
    root, _, name = folder.rpartition(os.sep)
    cursor = _snapshot.get(root)
    if cursor is None:
        return None
    known = snapshot.current(folder, cursor.take(name))
    if known is None:
        return None
    signatures, fields = known
    entry: _CachedSummary
    if fields[3] == "skill_md":
        entry = signatures["SKILL.md"], fields, None
    else:
        entry = (signatures[""], signatures.get("stats.json"), signatures["meta.json"]), fields, None
    _from_snapshot_folders.add(folder)
    return entry


def write_snapshot(path: Path, roots: Iterable[str], *, settle_ns: int = snapshot.SETTLE_NS) -> int | None:
    """Bring the snapshot at `path` up to date for the healthy skill folders of `roots`, keeping what it holds of
    other skills folders that still exist (another project's). An entry is kept while it is as current as the folder
    (taken from the snapshot by a listing of this process, or every signature in it still holds); any other healthy
    folder is read strictly (see `snapshot.read_strictly`), and left out when it changed within `settle_ns` of now.
    Returns how many entries the file holds, or None when it was already up to date. Raises OSError when it cannot be
    written."""
    started = time.time_ns()
    stored = snapshot.load_all(path)
    wanted = list(dict.fromkeys(roots))
    written = {root: names for root, names in stored.items() if root not in wanted and os.path.isdir(root)}
    changed = False
    for root in wanted:
        try:
            with _lock:
                folders = _scanned(root, os.stat(root))
                current = {folder for _, folder in folders.entries} & _from_snapshot_folders
        except OSError:  # (no such folder: nothing of it to keep)
            changed |= bool(stored.get(root))
            continue
        before = stored.get(root, {})
        kept = written[root] = {}
        for name, folder in folders.entries:
            if folder in folders.links or not snapshot.storable(name):
                continue
            text = before.get(name)
            if text is not None and (folder in current or snapshot.stored_holds(folder, text)):
                kept[name] = text
                continue
            read = snapshot.read_strictly(folder)
            if read is not None and read[1] < started - settle_ns:
                kept[name] = snapshot.stored_form(read[0])
                changed = True
        changed |= kept.keys() != before.keys()
    if not changed:
        return None
    snapshot.save(path, written)
    return sum(len(names) for names in written.values())


# --------------------------------------------------------------------------- following changes (see the docstring)

_lock = threading.RLock()
"""Held while a listing reads the change feed and checks or reads folders, so that no thread takes in a change that
another is about to trust an older reading over."""
_feed: SkillChangeFeed | None = None
_trusted: set[str] = set()
"""Skill folders whose cached entry the feed vouches for: watched before the entry was read or last checked, and
unchanged since."""
_suspects: dict[str, set[str]] = {}
"""Per root: its folders to check at the next listing (marked changed by the feed, or not vouched for)."""
_ready: dict[str, list[tuple[str, str]]] = {}
"""Per root: the folder list each of whose folders is in `_trusted` or in `_suspects` (all checked once)."""
_known: dict[str, tuple[list[tuple[str, str]], frozenset[str]]] = {}
"""Per root: the paths of its folder list, as a set."""
_generation: dict[str, int] = {}
"""Per root: counts the entries of its folders read afresh, so a view built before one is built again."""


def follow_roots(roots: Iterable[str], *, max_watches: int | None = None) -> bool:
    """Start the change feed (one per process) and follow these skills folders; False where no feed can run (not
    Linux, inotify unavailable): listings then check by `stat`, as before. `max_watches` caps the feed's watches."""
    global _feed
    with _lock:
        if _feed is None:
            from anton_tui.memory.skills.feed import start_feed

            _feed = start_feed(max_watches=max_watches)
            _forget_trust()
        if _feed is None:
            return False
        _feed.follow(roots)
        return True


def stop_following() -> None:
    """Stop the change feed and close its inotify descriptor; listings check every skill by `stat` again."""
    global _feed
    with _lock:
        if _feed is not None:
            _feed.close()
        _feed = None
        _forget_trust()


def change_feed() -> SkillChangeFeed | None:
    """The running change feed, if any."""
    return _feed


def _forget_trust() -> None:
    _trusted.clear()
    _suspects.clear()
    _ready.clear()


def _note_changes(dirty: set[str]) -> None:
    for path in dirty:
        _trusted.discard(path)
        _suspects.setdefault(os.path.dirname(path), set()).add(path)


def _check_suspects(root: str, folders: _Folders) -> None:
    """Check (and watch) the folders of `root` the feed does not vouch for; every folder when the folder list is new
    to the feed."""
    entries = folders.entries
    if _ready.get(root) is not entries:
        _suspects[root] = {path for _, path in entries}
        _ready[root] = entries
    suspects = _suspects.get(root)
    if not suspects:
        return
    known = _known.get(root)
    if known is None or known[0] is not entries:
        known = _known[root] = (entries, frozenset(path for _, path in entries))
    for path in sorted(suspects):  # in the folder list's order, in which a snapshot's cursor reads
        if path in known[1]:
            _summary_entry(path, path in folders.links)
        else:
            suspects.discard(path)


# --------------------------------------------------------------------------- listings of a store

SourceEntry = tuple[str, str, SummaryFields | None, str | None]


def _source_entries(folders: _Folders, found: list[_CachedSummary]) -> list[SourceEntry]:
    out: list[SourceEntry] = []
    for (name, path), (_, fields, problem) in zip(folders.entries, found, strict=False):
        if not (folders.plain_labels or is_valid_label(name)):
            continue
        if fields is not None and fields[3] == "skill_md":
            out.append((name, path, fields, None))
        elif problem is not None and os.path.lexists(os.path.join(path, "SKILL.md")):
            out.append((name, path, None, problem))
    return out


def _summaries(folders: _Folders, found: list[_CachedSummary], source: str) -> list[SkillSummary]:
    plain = folders.plain_labels
    return [
        {
            "label": label,
            "name": name,
            "description": description,
            "when_to_use": when_to_use,
            "format": kind,
            "source": source,
            "model_invocable": invocable,
        }
        for (label, _), (_, fields, _) in zip(folders.entries, found, strict=False)
        if fields is not None and (plain or is_valid_label(label)) and (source == "user" or fields[3] == "skill_md")
        for name, description, when_to_use, kind, invocable, _ in (fields,)
    ]


def _listed(name: str, folder: str, source: str) -> bool:
    """Whether the skill in `folder` is one a listing of `source` shows (as `_summaries` decides)."""
    fields, _problem = read_summary(folder)
    return fields is not None and is_valid_label(name) and (source == "user" or fields[3] == "skill_md")


def _marked(folders: _Folders, found: list[_CachedSummary]) -> set[str]:
    """The folders (paths) of the skills marked `user-invocable: true`."""
    return {
        path for (_, path), entry in zip(folders.entries, found, strict=False) if entry[1] is not None and entry[1][5]
    }


class SkillCatalog:
    """The listings of one skills folder and its read-only sources: summaries for the prompt, every skill for the
    screens, broken folders and label clashes. `SkillStore` holds one; reading goes through the process's caches
    above (and the change feed once it is followed)."""

    def __init__(self, root: Path, sources: tuple[SkillSource, ...], snapshot_path: Path | None = None) -> None:
        self.root = root
        self.sources = sources
        self.snapshot_path = snapshot_path
        """Where the listing of the last run is kept (see `snapshot`); None: no snapshot is read or written."""
        self._snapshot_taken = False
        self.listing_warning: str | None = None
        """Set when the skills folder could not be listed the last time it was read (e.g. no permission)."""
        self._merged: tuple[list[list[SkillSummary]], list[SkillSummary]] | None = None
        """The last merged listing and the per-source lists it was made from (reused while they are the same)."""
        self._ordered = in_precedence_order(sources)
        """The sources in precedence order; None stands for the user's own folder."""

    def save_snapshot(self, *, settle_ns: int = snapshot.SETTLE_NS) -> int | None:
        """Bring the snapshot of this store's skills folders up to date for the next run (see `write_snapshot`): how
        many skills it holds, or None when it was not written (already up to date, no snapshot path, or the file
        cannot be written)."""
        if self.snapshot_path is None:
            return None
        roots = [str(self.root), *(str(source.path) for source in self.sources)]
        try:
            return write_snapshot(self.snapshot_path, roots, settle_ns=settle_ns)
        except OSError as exc:
            log.warning("the skill listing's snapshot %s cannot be written: %s", self.snapshot_path, exc)
            return None

    def _use_snapshot(self) -> None:
        """Before this catalog's first listing: take in the snapshot (later listings, each turn's, skip it)."""
        if self.snapshot_path is not None and not self._snapshot_taken:
            load_snapshot(self.snapshot_path, [str(self.root), *(str(source.path) for source in self.sources)])
            self._snapshot_taken = True

    def follow_changes(self, *, max_watches: int | None = None) -> bool:
        """Let listings learn what changed from the change feed instead of checking every skill by `stat` (see the
        module's docstring): the feed follows this store's folder and every source's, and one listing watches each
        skill folder. Takes a while with thousands of skills (one cold listing and a watch per folder): call it off
        the UI's loop. False where no feed can run; listings then work as before. The feed is one per process."""
        if not follow_roots([str(self.root), *(str(source.path) for source in self.sources)], max_watches=max_watches):
            return False
        try:
            self.list_summaries()
        except OSError:
            pass  # the skills folder cannot be listed: `listing_warning` says so, and listings will say it again
        return True

    def stop_following_changes(self) -> None:
        """Stop the process's change feed (closing its inotify descriptor); listings check by `stat` again."""
        stop_following()

    def _source_entries(self, source: SkillSource) -> list[SourceEntry]:
        """(label, path, fields, problem) of each SKILL.md folder in a read-only source; folders of the older layout
        and non-skill folders are left out. A source that cannot be listed gives nothing."""
        self._use_snapshot()
        try:
            return _root_view(str(source.path), "entries", _source_entries)
        except OSError:
            return []

    def _source_summaries(self, source: SkillSource) -> list[SkillSummary]:
        self._use_snapshot()
        try:
            return _root_view(str(source.path), source.key, lambda e, f: _summaries(e, f, source.key))
        except OSError:
            return []

    def _user_summaries(self, *, hand_out: bool = False) -> tuple[list[SkillSummary], bool]:
        """The summaries of the user's own skills, and whether the list is the caller's own (see `_view`)."""
        self._use_snapshot()
        self.listing_warning = None
        try:
            return _view(str(self.root), "user", lambda e, f: _summaries(e, f, "user"), hand_out=hand_out)
        except (FileNotFoundError, NotADirectoryError):
            return [], True
        except OSError as exc:
            self.listing_warning = f"The skills folder {self.root} cannot be listed: {describe_error(exc)}"
            raise

    def list_summaries(self) -> list[SkillSummary]:
        """Label, name, description, when_to_use and source of every healthy skill that is not shadowed, sorted by
        label; procedures are not read."""
        if not self.sources:  # the user's own folder alone: both spellings of a label are listed, as they are
            summaries, own = self._user_summaries(hand_out=True)
            return summaries if own else [summary.copy() for summary in summaries]
        parts = [self._user_summaries()[0] if source is None else self._source_summaries(source)
                 for source in self._ordered]  # fmt: skip
        merged = self._merged
        if (
            merged is not None
            and len(merged[0]) == len(parts)
            and all(a is b for a, b in zip(merged[0], parts, strict=False))
        ):
            return [summary.copy() for summary in merged[1]]
        seen: set[str] = set()
        out: list[SkillSummary] = []
        for part in parts:
            for summary in part:
                key = match_key(summary["label"])
                if key not in seen:
                    seen.add(key)
                    out.append(summary)
        out.sort(key=lambda summary: summary["label"])
        self._merged = (parts, out)
        return [summary.copy() for summary in out]

    def slash_commands(self) -> list[tuple[str, str]]:
        """(label, description) of each listed skill marked `user-invocable: true` (the user runs it as `/label`),
        sorted by label; a shadowed skill's mark does not count."""
        listed = {summary["label"]: summary for summary in self.list_summaries()}
        marked: set[str] = set()
        roots = [str(self.root) if source is None else str(source.path) for source in self._ordered]
        for root in roots:
            try:
                marked |= _root_view(root, "slash", _marked)
            except OSError:
                continue
        sources = {source.key: str(source.path) for source in self.sources}
        out = []
        for label, summary in sorted(listed.items()):
            root = str(self.root) if summary["source"] == "user" else sources.get(summary["source"], "")
            if os.path.join(root, label) in marked:
                out.append((label, summary["description"]))
        return out

    def clashes(self) -> list[SkillClash]:
        """Labels held by more than one source, each with the source that wins. A label is a folder's name, so only
        the folders whose name another source (or another spelling in the same one) also has are read: with
        thousands of skills of your own and a few of a read-only source, a handful."""
        by_key: dict[str, list[tuple[str, str, str]]] = {}
        for source in self._ordered:
            root, key = (str(self.root), "user") if source is None else (str(source.path), source.key)
            try:
                entries = skill_folders(root)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                if source is None:
                    raise  # (the user's folder cannot be listed: said, as a listing says it)
                continue  # (a read-only source that cannot be listed lists nothing)
            for name, path in entries:
                by_key.setdefault(match_key(name), []).append((name, path, key))
        clashes = []
        for _, candidates in sorted(by_key.items()):
            if len(candidates) < 2:
                continue
            held = [(name, key) for name, path, key in candidates if _listed(name, path, key)]
            if len(held) > 1:
                clashes.append(SkillClash(held[0][0], held[0][1], tuple(key for _, key in held[1:])))
        return clashes

    def _folders(self) -> list[Path]:
        try:
            entries = skill_folders(str(self.root))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [Path(path) for _, path in entries]

    def list_all(self, *, include_shadowed: bool = False) -> list[Skill]:
        """Every skill that loads, sorted by label (shadowed skills of read-only sources only when asked)."""
        return self.survey(lambda skill: skill, include_shadowed=include_shadowed)[0]

    def broken(self) -> list[BrokenSkill]:
        """Skill folders whose files cannot be read, each with the reason: the user's own, then those of the
        read-only sources (a SKILL.md that does not parse or cannot be read). Their files are left as they are."""
        diagnosed = (diagnose(folder, self.root)[1] for folder in self._folders())
        return [problem for problem in diagnosed if problem is not None] + self._source_problems()

    def _source_problems(self) -> list[BrokenSkill]:
        return [
            BrokenSkill(name, Path(path), reason, source.key)
            for source in self.sources
            for name, path, _, reason in self._source_entries(source)
            if reason is not None
        ]

    def survey(
        self, convert: Callable[[Skill], T], *, include_shadowed: bool = False
    ) -> tuple[list[T], list[BrokenSkill]]:
        """`list_all()` and `broken()` in one pass, each skill folder read once.

        Each skill is handed to `convert` as soon as it is read and only what `convert` returns is kept, so a caller
        that needs a few fields of every skill (the Skills tab) never holds every procedure at once.
        """
        user: list[tuple[str, str, T]] = []
        problems: list[BrokenSkill] = []
        for folder in self._folders():
            skill, problem = diagnose(folder, self.root)
            if skill is not None:
                user.append((skill.label, skill.source, convert(skill)))
            elif problem is not None:
                problems.append(problem)
        problems += self._source_problems()
        if not self.sources:
            return [value for _, _, value in user], problems
        found: list[tuple[str, str, T]] = []
        for source in self._ordered:
            if source is None:
                found += user
                continue
            for _name, path, fields, _ in self._source_entries(source):
                if fields is None:
                    continue
                skill = read_source_skill(Path(path), source.path, source.key)
                if skill is not None:
                    found.append((skill.label, skill.source, convert(skill)))
        seen: set[str] = set()
        out = []
        for label, source_key, value in found:
            key = match_key(label)
            if key not in seen or include_shadowed:
                out.append((label, source_key, value))
            seen.add(key)
        out.sort(key=lambda item: (item[0], SOURCE_ORDER_INDEX.get(item[1], 99)))
        return [value for _, _, value in out], problems
