"""Real file-system faults for tests: a full disk (a small tmpfs) and a read-only folder.

A tmpfs and a read-only bind mount need root; a test that cannot have them is skipped. Without root a read-only
folder is made by taking away the write permission (which does not bind root, hence the mount when running as root).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, check=False)


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "512k") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `folder` for the block (the test is skipped where it cannot be mounted)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small file system to fill needs root (mount -t tmpfs)")
    folder.mkdir(parents=True, exist_ok=True)
    done = _run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    if done.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        _run("umount", "-l", str(folder))


def fill(folder: Path) -> Path:
    """Write into `folder` until its file system is full; returns the filler file (delete it to free the space)."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` and everything under it cannot be written during the block."""
    if os.geteuid() == 0:
        if shutil.which("mount") is None:
            pytest.skip("a read-only folder for root needs a read-only bind mount")
        done = _run("mount", "--bind", str(folder), str(folder))
        if done.returncode != 0:
            pytest.skip(f"a bind mount cannot be made here: {done.stderr.strip()}")
        done = _run("mount", "-o", "remount,bind,ro", str(folder))
        if done.returncode != 0:
            _run("umount", "-l", str(folder))
            pytest.skip(f"a bind mount cannot be made read-only here: {done.stderr.strip()}")
        try:
            yield
        finally:
            _run("umount", "-l", str(folder))
        return
    modes = {}
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            modes[path] = path.stat().st_mode
            path.chmod(stat.S_IMODE(modes[path]) & ~0o222)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(stat.S_IMODE(mode))
