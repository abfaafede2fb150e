"""Start-up snapshots: the few settings the first frame shows, kept from the last start with the same inputs.

Validating the settings needs pydantic, which takes about a tenth of a second to import. When the variables and
.env files are exactly those a previous start validated (their `EnvLayers.fingerprint` matches), the outcome is
known: the app paints its first frame from the snapshot and validates right after. With new or changed inputs
there is no snapshot, so the settings are validated before anything is drawn and a bad value stops the start
with its one-line message, as always.

The snapshots live in ``$ANTON_HOME/cache/anton-tui-start.json``, keyed by fingerprint, the most recent first.
They hold no secrets: only the values below. The file is a cache: when it cannot be read it is ignored, and
then replaced.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from anton_tui import __version__
from anton_tui.settings_sources import EnvLayers

SNAPSHOTS_KEPT = 16


def snapshot_file(home: Path) -> Path:
    return home / "cache" / "anton-tui-start.json"


@dataclass(frozen=True)
class SettingsSnapshot:
    """What the first frame needs from the settings; it reads like a `Settings` for those names."""

    home: Path
    project_dir: Path
    theme: str
    planning_provider: str
    planning_model: str
    effective_memory_mode: str
    episodic_memory: bool
    keymap: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, settings: Any) -> SettingsSnapshot:
        return cls(
            home=Path(settings.home),
            project_dir=Path(settings.project_dir),
            theme=str(settings.theme),
            planning_provider=str(settings.planning_provider),
            planning_model=str(settings.planning_model),
            effective_memory_mode=str(settings.effective_memory_mode),
            episodic_memory=bool(settings.episodic_memory),
            keymap=dict(settings.keymap),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"home": str(self.home), "project_dir": str(self.project_dir)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SettingsSnapshot:
        return cls(**data | {"home": Path(data["home"]), "project_dir": Path(data["project_dir"])})


def recall_snapshot(layers: EnvLayers) -> SettingsSnapshot | None:
    """The snapshot a start with exactly these inputs left, if any."""
    entry = _read(snapshot_file(layers.home)).get(layers.fingerprint(__version__))
    if not isinstance(entry, dict):
        return None
    try:
        return SettingsSnapshot.from_json(entry)
    except (TypeError, KeyError):
        return None


def remember_snapshot(layers: EnvLayers, snapshot: SettingsSnapshot) -> None:
    """Keep `snapshot` for the next start with these inputs. Best effort: a home that cannot be written is skipped."""
    key = layers.fingerprint(__version__)
    _write(snapshot_file(layers.home), {key: snapshot.to_json()} | _others(layers, key))


def forget_snapshot(layers: EnvLayers) -> None:
    """Drop the snapshot for these inputs (their settings turned out not to validate)."""
    key = layers.fingerprint(__version__)
    _write(snapshot_file(layers.home), _others(layers, key))


def _others(layers: EnvLayers, key: str) -> dict[str, Any]:
    return {k: v for k, v in _read(snapshot_file(layers.home)).items() if k != key}


def _write(path: Path, entries: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(dict(list(entries.items())[:SNAPSHOTS_KEPT]), handle, indent=1)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
