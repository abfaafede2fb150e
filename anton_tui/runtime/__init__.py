"""The engine's face to the UI: the `Runtime` (settings, session, memory stores, scratchpads and background work
behind typed async operations) and `RuntimeStarter`, which builds one from the settings' sources."""

from anton_tui.runtime.protocols import ChatSessionLike, ScratchpadControl, SettingsLike
from anton_tui.runtime.runtime import Runtime, SkillListing, SkillSaved, off_loop
from anton_tui.runtime.start import RuntimeStarter

__all__ = [
    "ChatSessionLike",
    "Runtime",
    "RuntimeStarter",
    "ScratchpadControl",
    "SettingsLike",
    "SkillListing",
    "SkillSaved",
    "off_loop",
]
