"""The managed memory tier: a read-only folder of rules and lessons an administrator sets for everyone on a machine.

Its place is ``ANTON_MANAGED_MEMORY`` (a folder; ``off`` turns the tier off), else the system-wide default
``/etc/anton/memory`` when that folder exists. It holds ``rules.md`` and ``lessons.md`` in Anton's format; they are
read ahead of the user's own memory, as Anton 2.26.10 orders its operator tier, and never written, compacted or moved
(`ManagedHippocampus` refuses every write). The folder may be a git clone, which sync keeps up to date by pulling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anton_tui.memory.engrams.hippocampus import Hippocampus, MemoryFileError

SYSTEM_DEFAULT = Path("/etc/anton/memory")
OFF = ("off", "none", "false", "0", "no")


def managed_dir(setting: str | None, system_default: Path = SYSTEM_DEFAULT) -> Path | None:
    """The managed folder for a setting value (None: no managed tier)."""
    if setting is not None and setting.strip():
        if setting.strip().lower() in OFF:
            return None
        return Path(setting.strip()).expanduser()
    return system_default if system_default.is_dir() else None


class ManagedHippocampus(Hippocampus):
    """The managed folder's memory: read like any scope, never written."""

    def __init__(self, base_dir: Path | str) -> None:
        super().__init__(base_dir, scope="managed")

    def _refuse(self, *_args: Any, **_kwargs: Any) -> bool:
        raise MemoryFileError(f"{self.base_dir} is managed memory, set by an administrator: it is read-only here")

    _modify = replace_bytes = encode_rule = encode_lesson = rewrite_identity = _refuse
    update_entry = delete_entry = rewrite_file = remove_profile_lines = _refuse


_PRECEDENCE = "The operator's rules and lessons apply to everyone and win over {name} when the two conflict."


def operator_precedence(name: str = "Your Memory") -> str:
    """The line under the first ``## Operator Memory`` heading (Anton 2.26.10's words)."""
    return _PRECEDENCE.format(name=name)


def learned_memory_notice(presence: str = "present") -> str:
    """Anton's ``## Learned memory status`` section for memory shared across people (its "shared" scope)."""
    status = (
        "Learned memory is shared across people, not a private profile of this user. "
        "Do not attribute shared entries to this user without evidence. "
    )
    status += {
        "empty": "The shared store has no saved memories.",
        "present": "The shared store contains saved memories; retrieval may omit entries.",
    }.get(presence, "The shared store's saved contents could not be verified.")
    return (
        "## Learned memory status\n" + status + "\n"
        "Product instructions and operator-managed rules are not remembered user preferences. "
        "Do not present them as facts learned about the user."
    )
