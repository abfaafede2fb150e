"""The engine's face to the UI: the `Runtime` (settings, session, memory stores, scratchpads and background work
behind typed async operations and snapshots), the result types it hands out, and `RuntimeStarter`, which builds one
from the settings' sources."""

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
