"""One-time migration of the oldest memory formats into the project's memory/lessons.md.

Older versions kept notes in ``.anton/context/*.md`` (written by the user) and ``.anton/learnings/*.md`` (written by
the agent, with topic names in ``learnings/index.json``). Each line worth keeping becomes one lesson, tagged with the
file's topic. The old files are only read, never changed or deleted, and running the migration again adds nothing.

Brain analogy: reconsolidation, when a recalled memory is stored again in a new form without losing its content.
"""

from __future__ import annotations

import json
from pathlib import Path

from anton_tui.memory.engrams.engram import sanitize_slug
from anton_tui.memory.engrams.hippocampus import Hippocampus, MemoryFileError

MIN_FACT_CHARS = 6
_MEMORY_FILES = ("rules.md", "lessons.md", "profile.md")


def _anton_dir(project_dir: Path | str) -> Path:
    """Accept either the project folder or its ``.anton`` folder."""
    path = Path(project_dir)
    return path if path.name == ".anton" else path / ".anton"


def _markdown_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file() and not p.name.startswith("."))


def _facts(text: str) -> list[str]:
    """Lines worth a lesson: no headings, separators or blank lines, bullets stripped, at least 6 characters."""
    facts = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line == "---":
            continue
        if line.startswith(("- ", "* ")):
            line = line[2:].strip()
        if len(line) >= MIN_FACT_CHARS:
            facts.append(line)
    return facts


def _learning_topics(folder: Path) -> dict[str, str]:
    """``{file stem: topic}`` from learnings/index.json; an unreadable index just means no topic names."""
    try:
        index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(index, dict):
        return {}
    return {
        stem: entry["topic"]
        for stem, entry in index.items()
        if isinstance(entry, dict) and isinstance(entry.get("topic"), str) and entry["topic"].strip()
    }


def needs_reconsolidation(project_dir: Path | str) -> bool:
    """True when legacy context/learnings notes exist and the project has no rules.md, lessons.md or profile.md yet."""
    root = _anton_dir(project_dir)
    has_legacy = bool(_markdown_files(root / "context") or _markdown_files(root / "learnings"))
    has_memory = any((root / "memory" / name).exists() for name in _MEMORY_FILES)
    return has_legacy and not has_memory


def reconsolidate(project_dir: Path | str) -> list[str]:
    """Copy legacy notes into memory/lessons.md (context: source user; learnings: source consolidation).

    Returns one line per file handled, for the log; an empty list when there was nothing to migrate.
    """
    root = _anton_dir(project_dir)
    hc = Hippocampus(root / "memory")
    topics = _learning_topics(root / "learnings")
    plan = [(path, path.stem, "user") for path in _markdown_files(root / "context")]
    plan += [(path, topics.get(path.stem, path.stem), "consolidation") for path in _markdown_files(root / "learnings")]
    actions = []
    for path, topic, source in plan:
        where = f"{path.parent.name}/{path.name}"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            actions.append(f"Skipped {where}: {exc}")
            continue
        slug = sanitize_slug(topic.replace("_", " ").replace("-", " "))
        try:
            added = sum(hc.encode_lesson(fact, topic=slug, source=source) for fact in _facts(text))
        except MemoryFileError as exc:
            actions.append(f"Stopped: {exc}")
            break
        actions.append(f"Migrated {where} → memory/lessons.md ({added} new lessons, topic {slug})")
    if actions:
        actions.insert(0, f"Reconsolidated {len(plan)} legacy memory files")
    return actions
