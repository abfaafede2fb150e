"""Copies of memory files kept before a change that drops entries (compaction, folding the project profile into the
global one): ``memory/backups/<file name>.<local time>.bak``, the last few per file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from anton_tui.memory.files.locking import atomic_write

BACKUPS_KEPT = 5


def keep_backup(folder: Path, name: str, data: bytes) -> Path:
    """Save `data` as a backup of the file `name` in `folder`; older backups of that file beyond the last
    `BACKUPS_KEPT` are removed. Returns the backup's path."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    path = folder / f"{name}.{stamp}.bak"
    atomic_write(path, data)
    for old in sorted(folder.glob(f"{name}.*.bak"))[:-BACKUPS_KEPT]:
        old.unlink(missing_ok=True)
    return path
