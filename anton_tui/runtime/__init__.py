"""The engine's face to the UI: the `Runtime` (settings, session, memory stores, scratchpads and background work
behind typed async operations and snapshots), the result types it hands out, and `RuntimeStarter`, which builds one
from the settings' sources.

The names are loaded when first asked for (`__getattr__`): the first frame needs only `RuntimeStarter` and the first
rows of the memory files, and the rest of the engine (memory stores, episode index, session) is imported when the
runtime is built, right after that frame."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.agent.ledger import FoldedTurn, Ledger  # what a summary's ledger holds, as the chat shows it
    from anton_tui.runtime.conversations import ExportedConversation
    from anton_tui.runtime.first_look import FirstLook, FirstRows
    from anton_tui.runtime.memory_reads import (
        CompactionFile,
        CompactionTable,
        EntryListing,
        EpisodeSearch,
        EpisodeTurn,
        MemoryOverview,
        ScopeEntries,
        ScopeOverview,
        SessionTurns,
    )
    from anton_tui.runtime.protocols import ChatSessionLike, ScratchpadControl, SettingsLike
    from anton_tui.runtime.reflection import (
        ProposalNotDecided,
        ProposalRow,
        ReflectionChain,
        ReflectionPage,
        ReflectionRow,
    )
    from anton_tui.runtime.runtime import Runtime
    from anton_tui.runtime.skill_edits import SkillRenameError, SkillSaved
    from anton_tui.runtime.skill_install import SkillInstallReport
    from anton_tui.runtime.skill_reads import SkillListing, SkillLookup, SkillPart, SkillUsage, SkillUsageListing
    from anton_tui.runtime.start import RuntimeStarter
    from anton_tui.runtime.usage import UsageFigures

_MODULE_OF = {
    "ChatSessionLike": "anton_tui.runtime.protocols",
    "CompactionFile": "anton_tui.runtime.memory_reads",
    "CompactionTable": "anton_tui.runtime.memory_reads",
    "EntryListing": "anton_tui.runtime.memory_reads",
    "EpisodeSearch": "anton_tui.runtime.memory_reads",
    "EpisodeTurn": "anton_tui.runtime.memory_reads",
    "ExportedConversation": "anton_tui.runtime.conversations",
    "FirstLook": "anton_tui.runtime.first_look",
    "FirstRows": "anton_tui.runtime.first_look",
    "FoldedTurn": "anton_tui.agent.ledger",
    "Ledger": "anton_tui.agent.ledger",
    "MemoryOverview": "anton_tui.runtime.memory_reads",
    "ProposalNotDecided": "anton_tui.runtime.reflection",
    "ProposalRow": "anton_tui.runtime.reflection",
    "ReflectionChain": "anton_tui.runtime.reflection",
    "ReflectionPage": "anton_tui.runtime.reflection",
    "ReflectionRow": "anton_tui.runtime.reflection",
    "Runtime": "anton_tui.runtime.runtime",
    "RuntimeStarter": "anton_tui.runtime.start",
    "ScopeEntries": "anton_tui.runtime.memory_reads",
    "ScopeOverview": "anton_tui.runtime.memory_reads",
    "ScratchpadControl": "anton_tui.runtime.protocols",
    "SessionTurns": "anton_tui.runtime.memory_reads",
    "SettingsLike": "anton_tui.runtime.protocols",
    "SkillInstallReport": "anton_tui.runtime.skill_install",
    "SkillListing": "anton_tui.runtime.skill_reads",
    "SkillLookup": "anton_tui.runtime.skill_reads",
    "SkillPart": "anton_tui.runtime.skill_reads",
    "SkillRenameError": "anton_tui.runtime.skill_edits",
    "SkillSaved": "anton_tui.runtime.skill_edits",
    "SkillUsage": "anton_tui.runtime.skill_reads",
    "SkillUsageListing": "anton_tui.runtime.skill_reads",
    "UsageFigures": "anton_tui.runtime.usage",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once found, an ordinary attribute
    return value


__all__ = [
    "ChatSessionLike",
    "CompactionFile",
    "CompactionTable",
    "EntryListing",
    "EpisodeSearch",
    "EpisodeTurn",
    "ExportedConversation",
    "FirstLook",
    "FirstRows",
    "FoldedTurn",
    "Ledger",
    "MemoryOverview",
    "ProposalNotDecided",
    "ProposalRow",
    "ReflectionChain",
    "ReflectionPage",
    "ReflectionRow",
    "Runtime",
    "RuntimeStarter",
    "ScopeEntries",
    "ScopeOverview",
    "ScratchpadControl",
    "SessionTurns",
    "SettingsLike",
    "SkillInstallReport",
    "SkillListing",
    "SkillLookup",
    "SkillPart",
    "SkillRenameError",
    "SkillSaved",
    "SkillUsage",
    "SkillUsageListing",
    "UsageFigures",
]
