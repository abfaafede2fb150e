"""How the UI names where a memory entry came from.

Anton's files keep a `source:` of `user`, `llm` or `consolidation` on each entry; the chat names the learner that
wrote it (the self-check, consolidation). Every view says the source in the same words, and names the learner too
where it is known, so a rule the chat announced as the self-check's reads the same in the Rules tab.
"""

from __future__ import annotations

SOURCE_WORDS = {
    "user": "from you",
    "llm": "from the model",
    "consolidation": "learned after a turn",
}


def source_words(source: str, learner: str = "") -> str:
    """Where an entry came from, for its `source:` value (kept in brackets, as the file has it), naming the
    `learner` that wrote it when it is known: `from the self-check (source:consolidation)`."""
    said = f"from the {learner}" if learner else SOURCE_WORDS.get(source, f"from {source}")
    return f"{said} (source:{source})"
