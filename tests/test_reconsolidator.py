"""Legacy .anton/context and .anton/learnings notes move into memory/lessons.md once; old files stay as they were."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from anton_tui.memory.engrams.hippocampus import Hippocampus
from anton_tui.memory.engrams.reconsolidator import needs_reconsolidation, reconsolidate

CONTEXT_NOTES = """# Data sources

- The sales CSV lives in data/sales.csv
* Dates are in DD/MM/YYYY
short
   Revenue is stored in cents
"""
LEARNING_NOTES = """
## CoinGecko API

Free tier allows about 50 requests per minute.

---

## CoinGecko API

- Use /coins/markets for bulk prices
- ok
"""


def legacy_project(project_dir: Path) -> Path:
    anton = project_dir / ".anton"
    (anton / "context").mkdir(parents=True)
    (anton / "learnings").mkdir()
    (anton / "context" / "data_sources.md").write_text(CONTEXT_NOTES)
    (anton / "context" / "notes.txt").write_text("not markdown, not migrated\n")
    (anton / "learnings" / "coingecko_api.md").write_text(LEARNING_NOTES)
    (anton / "learnings" / "misc_tips.md").write_text("Prefer parquet over csv for big tables\n")
    index = {"coingecko_api": {"topic": "CoinGecko API", "summary": "rate limits", "path": "x", "updated_at": 1.0}}
    (anton / "learnings" / "index.json").write_text(json.dumps(index, indent=2))
    return anton


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def test_migrates_legacy_notes_into_lessons(project_dir: Path) -> None:
    anton = legacy_project(project_dir)
    assert needs_reconsolidation(project_dir)
    actions = reconsolidate(project_dir)
    assert actions[0] == "Reconsolidated 3 legacy memory files"
    lessons = Hippocampus(anton / "memory").get_lessons()
    assert [(e.text, e.topic, e.source) for e in lessons] == [
        ("The sales CSV lives in data/sales.csv", "data-sources", "user"),
        ("Dates are in DD/MM/YYYY", "data-sources", "user"),
        ("Revenue is stored in cents", "data-sources", "user"),
        ("Free tier allows about 50 requests per minute.", "coingecko-api", "consolidation"),
        ("Use /coins/markets for bulk prices", "coingecko-api", "consolidation"),
        ("Prefer parquet over csv for big tables", "misc-tips", "consolidation"),
    ]
    assert (anton / "memory" / "lessons.md").read_text().startswith(
        "# Lessons\n- The sales CSV lives in data/sales.csv <!-- source:user topic:data-sources ts:"
    )
    assert not needs_reconsolidation(project_dir)


def test_old_files_stay_untouched_and_a_second_run_adds_nothing(project_dir: Path) -> None:
    anton = legacy_project(project_dir)
    before = {name: digest for name, digest in snapshot(anton).items() if not name.startswith("memory")}
    reconsolidate(anton)  # the .anton folder itself is accepted too
    lessons = (anton / "memory" / "lessons.md").read_bytes()
    reconsolidate(project_dir)
    after = snapshot(anton)
    assert {name: digest for name, digest in after.items() if not name.startswith("memory")} == before
    assert (anton / "memory" / "lessons.md").read_bytes() == lessons


def test_nothing_to_do_without_legacy_files_or_with_new_memory(project_dir: Path) -> None:
    assert not needs_reconsolidation(project_dir)
    assert reconsolidate(project_dir) == []
    anton = legacy_project(project_dir)
    (anton / "memory").mkdir()
    (anton / "memory" / "rules.md").write_text("# Rules\n")
    assert not needs_reconsolidation(project_dir)


def test_unreadable_legacy_file_is_skipped_and_reported(project_dir: Path) -> None:
    anton = legacy_project(project_dir)
    (anton / "context" / "broken.md").write_bytes(b"- caf\xe9 notes that are long enough\n")
    actions = reconsolidate(project_dir)
    assert any(line.startswith("Skipped context/broken.md") for line in actions)
    assert len(Hippocampus(anton / "memory").get_lessons()) == 6
    assert (anton / "context" / "broken.md").read_bytes() == b"- caf\xe9 notes that are long enough\n"
