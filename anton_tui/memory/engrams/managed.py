"""The managed memory tier: a read-only folder of rules and lessons an administrator sets for everyone on a machine.

Its place is ``ANTON_MANAGED_MEMORY`` (a folder; ``off`` turns the tier off), else the system-wide default
``/etc/anton/memory`` when that folder exists (`anton_tui.paths.managed_dir`). It holds ``rules.md`` and ``lessons.md`` in Anton's format; they are
read ahead of the user's own memory, as Anton 2.26.10 orders its operator tier, and never written, compacted or moved
(`ManagedHippocampus` refuses every write). The folder may be a git clone, which sync keeps up to date by pulling
(an update that holds a symbolic link is refused). A memory file in it that is a symbolic link is not read through:
its rules would come from a file outside the folder; it is reported as a problem instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anton_tui.memory.engrams.engram import Engram, MemoryProblem, ParsedFile
from anton_tui.memory.engrams.hippocampus import Hippocampus, MemoryFileError


class ManagedHippocampus(Hippocampus):
    """The managed folder's memory: read like any scope, never written."""

    def __init__(self, base_dir: Path | str) -> None:
        super().__init__(base_dir, scope="managed")

    def _refuse(self, *_args: Any, **_kwargs: Any) -> bool:
        raise MemoryFileError(f"{self.base_dir} is managed memory, set by an administrator: it is read-only here")

    _modify = replace_bytes = encode_rule = encode_lesson = rewrite_identity = _refuse
    update_entry = delete_entry = rewrite_file = remove_profile_lines = _refuse

    def _linked(self, path: Path) -> ParsedFile | None:
        """A memory file that is a symbolic link, as a parse with nothing in it but the problem (None otherwise)."""
        if not path.is_symlink():
            return None
        reason = "is a symbolic link; managed memory is read only from the folder's own files, so it was not read"
        return ParsedFile(problems=[MemoryProblem(path, None, "", reason)], writable=False)

    def _rules(self, fresh: bool = False) -> ParsedFile:
        return self._linked(self.rules_path) or super()._rules(fresh)

    def _lessons(self, fresh: bool = False) -> ParsedFile:
        return self._linked(self.lessons_path) or super()._lessons(fresh)

    def _profile(self, fresh: bool = False) -> ParsedFile:
        return self._linked(self.profile_path) or super()._profile(fresh)

    def list_entries(self, kind_file: str) -> list[Engram]:
        return [] if self._linked(self._target(kind_file)[1]) else super().list_entries(kind_file)

    def read_file(self, kind_file: str) -> ParsedFile:
        return self._linked(self._target(kind_file)[1]) or super().read_file(kind_file)


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
