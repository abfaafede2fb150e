"""Two machines that share their global memory: two ANTON_HOME folders (a laptop and a server), each with its own
project, and a bare repository made here as their remote. Real dulwich repositories, real files.

`bare` and `pair` are fixtures for every test (`conftest.py` takes them in); `machine` makes one more machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from anton_tui.memory.stores import MemoryStores
from anton_tui.memory.sync import syncer as sync
from anton_tui.paths import AntonPaths


def machine(root: Path, name: str) -> MemoryStores:
    """The memory of one machine: its home and project folders under `root / name`."""
    home, project = root / name / "home", root / name / "project"
    project.mkdir(parents=True)
    return MemoryStores.from_paths(AntonPaths(home, project))


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """An empty bare repository, the remote both machines share."""
    from dulwich.repo import Repo

    path = tmp_path / "team-memory.git"
    path.mkdir()
    Repo.init_bare(str(path)).close()
    return path


@pytest.fixture
def pair(tmp_path: Path, bare: Path) -> tuple[MemoryStores, MemoryStores]:
    """The laptop and the server, each recording its memory's history, with `bare` as the remote of their global
    memory."""
    a, b = machine(tmp_path, "laptop"), machine(tmp_path, "server")
    for stores in (a, b):
        stores.recorder.start()
        sync.add_remote(stores, "global", str(bare))
    return a, b
