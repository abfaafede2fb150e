"""Which skill folders changed since the last look: a change feed over the skills folders, read by the listing.

The skill listing (`listing.py`) runs every turn. Instead of checking every skill's files by `stat` to notice
edits made by any program, it can ask this feed which skill folders changed. The feed is a Linux inotify instance
with one non-recursive watch on each followed skills folder (a "root") and one on each skill folder in it. The
kernel queues an inotify event inside the very call that changes a file (write, truncate, rename, delete, chmod), so
reading the queue without waiting at the start of a listing returns every change that finished before the listing
began: no thread, no delay.

`drain()` turns the queued events into the set of skill folders to check again:
- an event on a root that names an entry marks `root/name`; one that adds, removes or renames the entry also drops
  the watch on it (the name may now stand for another folder, which gets a fresh watch when it is next read);
- an event on a skill folder marks that folder;
- a lost queue (the kernel's queue overflowed, the read failed): the feed cannot say what changed, nor whether a
  watch still sits on the folder of its name, so it drops every watch and marks every watched folder changed; the
  listing checks each one once by `stat` and watches it again, and trusts the feed afterwards.
A root that is deleted, moved or replaced by another folder (noticed by its inode when the listing checks it) drops
every watch under it. A folder that cannot be watched (the watch budget is spent, no permission, a symlinked folder)
is simply not vouched for: the listing keeps checking it by `stat`, as without a feed.

The feed never spends more than `max_watches` watches (a quarter of the user's `fs.inotify.max_user_watches` by
default; other programs need the rest) and does not follow roots on network or FUSE file systems, where changes
made on another machine raise no event. It is not thread-safe on its own: `listing` calls it under its lock.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable
from typing import Any

# inotify(7) flags, as in <sys/inotify.h>.
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x2000, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000

CHANGES = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
SELF = IN_DELETE_SELF | IN_MOVE_SELF
MASK = CHANGES | SELF | IN_ONLYDIR
FOLDER_MASK = MASK | IN_DONT_FOLLOW  # a symlinked skill folder is not a directory itself: it is not watched
NAME_CHANGES = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE

REMOTE_FILE_SYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "virtiofs", "ceph", "glusterfs", "lustre", "afs", "davfs", "drvfs"}
)
DEFAULT_MAX_WATCHES = 8192


def default_max_watches() -> int:
    """A quarter of the user's inotify watch limit (8,192 when it cannot be read): the rest is left to other
    programs (editors, file managers, the app's own folder watcher)."""
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as handle:
            return max(1, int(handle.read().strip()) // 4)
    except (OSError, ValueError):
        return DEFAULT_MAX_WATCHES


def file_system_type(path: str) -> str | None:
    """The type of the file system `path` lives on (`ext4`, `nfs4`, `fuse.sshfs`…), from /proc/self/mountinfo."""
    real = os.path.realpath(path)
    best, kind = "", None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if len(fields) < 5 or not right:
                    continue
                mount = fields[4].replace("\\040", " ")
                inside = real == mount or real.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best):
                    best, kind = mount, right.split()[0]
    except OSError:
        return None
    return kind


def raises_events_for_every_change(path: str) -> bool:
    """False for network and FUSE file systems: a change made on another machine (or behind the FUSE server's
    back) raises no inotify event here."""
    kind = file_system_type(path)
    if kind is None:
        return False
    return not (kind in REMOTE_FILE_SYSTEMS or kind.startswith(("fuse", "nfs")))


class SkillChangeFeed:
    """inotify watches over skills folders and their skill folders, read without waiting (see the module's docstring).

    Raises OSError when inotify is not available (not Linux, no instance left); `inotify` is the `inotify_simple`
    module, passed in so this module imports nothing heavy.
    """

    def __init__(self, inotify: Any, *, max_watches: int | None = None) -> None:
        self._inotify = inotify.INotify(nonblocking=True)
        self.max_watches = default_max_watches() if max_watches is None else max_watches
        self._path_of: dict[int, str] = {}
        """Watch descriptor → the path it was added for."""
        self._wd_of: dict[str, int] = {}
        """Folder or root path → its watch descriptor."""
        self._roots: dict[str, tuple[int, int] | None] = {}
        """Each followed root → (device, inode) of the folder its watch is on, or None while it has no watch."""
        self._refused: dict[str, tuple[int, int]] = {}
        """Roots on a file system whose changes raise no event everywhere (by the (device, inode) refused)."""
        self._children: dict[str, set[str]] = {}
        """Each followed root → the skill folders in it that have a watch."""
        self._dirty: set[str] = set()
        self.lost = False
        """Events may have been lost since the last `drain()` (handled, and cleared, by the next one)."""

    # ----------------------------------------------------------------- what is followed

    @property
    def watch_count(self) -> int:
        return len(self._path_of)

    def fileno(self) -> int:
        return self._inotify.fileno()

    def follow(self, roots: Iterable[str]) -> None:
        """Follow these skills folders (watched when the listing next finds them, see `check_root`)."""
        for root in roots:
            self._roots.setdefault(root, None)

    def following(self, root: str) -> bool:
        return root in self._roots

    def check_root(self, root: str, st: os.stat_result) -> bool:
        """Whether the feed vouches for what changes in `root`'s entries, given the listing's fresh `stat` of it.

        Watches the root when it has no watch yet or is now another folder than the one watched (replaced, or a
        parent renamed); the watches of the old one's skill folders are dropped and those folders marked changed.
        """
        if root not in self._roots:
            return False
        identity = (st.st_dev, st.st_ino)
        if self._roots[root] == identity:
            return True
        self._drop_root(root)
        if self.watch_count >= self.max_watches or self._refused.get(root) == identity:
            return False
        if not raises_events_for_every_change(root):
            self._refused[root] = identity  # asked again only if the root becomes another folder
            return False
        try:
            wd = self._inotify.add_watch(root, MASK)
        except OSError:
            return False
        self._forget_wd(wd)  # an inode already watched under another name gives the same descriptor
        self._path_of[wd], self._wd_of[root] = root, wd
        self._roots[root] = identity
        return True

    def watch(self, folder: str) -> bool:
        """Make sure `folder` (a skill folder in a followed, watched root) is watched; True when it is.

        Called before the folder is read, so whatever changes after the read raises an event."""
        if folder in self._wd_of:
            return True
        root = os.path.dirname(folder)
        if self._roots.get(root) is None or self.watch_count >= self.max_watches:
            return False
        try:
            wd = self._inotify.add_watch(folder, FOLDER_MASK)
        except OSError as exc:  # gone, no permission, a symlink, or the user's watch limit reached
            if exc.errno == errno.ENOSPC:
                self.max_watches = self.watch_count  # other programs hold the rest: stop asking for more
            return False
        self._forget_wd(wd)
        self._path_of[wd], self._wd_of[folder] = folder, wd
        self._children.setdefault(root, set()).add(folder)
        return True

    # ----------------------------------------------------------------- reading the queue

    def changes(self, root: str, st: os.stat_result) -> set[str]:
        """What a listing of `root` asks first: the folders marked changed since the last call (of any root), with
        `root` watched (again) as `check_root` does."""
        dirty = self.drain()
        self.check_root(root, st)
        return dirty | self.take_marked() if self._dirty else dirty

    @property
    def marked(self) -> bool:
        """Whether folders were marked changed by dropped watches since the last `drain` or `take_marked`."""
        return bool(self._dirty)

    def take_marked(self) -> set[str]:
        dirty, self._dirty = self._dirty, set()
        return dirty

    def drain(self) -> set[str]:
        """The folders marked changed by the events queued so far and by dropped watches. Never waits."""
        try:
            events = self._inotify.read(timeout=0)
        except OSError:
            events = ()
            self.lost = True
        for wd, mask, _, name in events:
            if mask & IN_Q_OVERFLOW:
                self.lost = True
                continue
            path = self._path_of.get(wd)
            if path is None:
                continue
            if mask & IN_IGNORED:  # the kernel removed the watch (the folder was deleted, or its file system gone)
                self._path_of.pop(wd, None)
                if path in self._roots:
                    self._drop_root(path)
                else:
                    self._unwatch(path)
                continue
            if path in self._roots:
                if name:
                    child = os.path.join(path, name)
                    self._dirty.add(child)
                    if mask & NAME_CHANGES:
                        self._unwatch(child)
                elif mask & (SELF | IN_UNMOUNT):
                    self._drop_root(path)
            else:
                self._dirty.add(path)
                if mask & (SELF | IN_UNMOUNT):
                    self._unwatch(path)
        if self.lost:  # renames may have been missed too, so no watch can be trusted to be on the right folder
            self.lost = False
            for root in list(self._roots):
                self._drop_root(root)
        dirty, self._dirty = self._dirty, set()
        return dirty

    def close(self) -> None:
        """Close the inotify descriptor (the kernel drops every watch with it)."""
        self._inotify.close()
        self._path_of.clear()
        self._wd_of.clear()
        self._children.clear()
        self._roots = dict.fromkeys(self._roots)

    # ----------------------------------------------------------------- dropping watches

    def _forget_wd(self, wd: int) -> None:
        """`wd` now stands for a newly added path: the path it stood for is no longer watched."""
        old = self._path_of.pop(wd, None)
        if old is not None:
            self._wd_of.pop(old, None)
            self._dirty.add(old)
            if old in self._roots:
                self._drop_root(old)
            else:
                self._children.get(os.path.dirname(old), set()).discard(old)

    def _unwatch(self, folder: str) -> None:
        self._dirty.add(folder)
        wd = self._wd_of.pop(folder, None)
        self._children.get(os.path.dirname(folder), set()).discard(folder)
        if wd is None:
            return
        if self._path_of.get(wd) == folder:
            del self._path_of[wd]
            try:
                self._inotify.rm_watch(wd)
            except OSError:
                pass  # the kernel had removed it already

    def _drop_root(self, root: str) -> None:
        """Forget `root`'s watch and those of its skill folders (each marked changed); re-watched by `check_root`."""
        for folder in list(self._children.pop(root, ())):
            self._unwatch(folder)
        wd = self._wd_of.pop(root, None)
        if wd is not None and self._path_of.get(wd) == root:
            del self._path_of[wd]
            with contextlib.suppress(OSError):
                self._inotify.rm_watch(wd)
        if root in self._roots:
            self._roots[root] = None


def start_feed(*, max_watches: int | None = None) -> SkillChangeFeed | None:
    """A new feed, or None where inotify is not available (not Linux, `inotify_simple` missing, no instance left)."""
    try:
        import inotify_simple
    except (ImportError, OSError):
        return None
    try:
        return SkillChangeFeed(inotify_simple, max_watches=max_watches)
    except (OSError, AttributeError):
        return None
